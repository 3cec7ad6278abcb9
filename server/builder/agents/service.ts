/**
 * Agents: create, edit the draft, publish immutable numbered versions, delete (Admin role), read the
 * published view and list. Knows nothing of HTTP, so MCP tools can reuse it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { InvalidRequest, NotFound } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { Cursors, type PageRequest } from "../../platform/pagination.js"
import { transactionsOn } from "../../platform/sql/database.js"
import { emptyPatchMessage, type PublishedVersion } from "../versions/domain.js"
import { existingIds } from "../versions/reference-repo.js"
import { referenceProblems, refuseProblems } from "../versions/references.js"
import { draftListItem, type ItemListRequest, listName, removeItem, requireDraftsScope } from "../versions/operations.js"
import { ServerDefaultModel } from "../versions/model.js"
import { agentDefinitionText, parseAgentDefinition, toAgent, toAgentDraft } from "./definition.js"
import type { Agent, AgentDefinition, AgentDraft, AgentDraftItem, AgentSummary, CreateAgent, PatchAgentDraft } from "./domain.js"
import { AgentRepo } from "./repo.js"

/** How to list Agents. */
export type AgentListRequest = ItemListRequest

/** Agent operations for a calling principal. */
export class AgentService extends Effect.Service<AgentService>()("svc/AgentService", {
  effect: Effect.gen(function* () {
    const repo = yield* AgentRepo
    const cursors = yield* Cursors
    const clock = yield* AppClock
    const sql = yield* SqlClient.SqlClient
    const inTransaction = transactionsOn(sql)
    const serverDefault = yield* ServerDefaultModel

    const notFound = (id: string) => new NotFound({ message: `No Agent '${id}' in this organization.` })

    /** Refuses references (the lists given) that are not the organization's, naming every one (before anything is written). */
    const checkReferences = (organizationId: string, given: { readonly knowledgebaseIds?: ReadonlyArray<string> | undefined; readonly flowIds?: ReadonlyArray<string> | undefined }) =>
      Effect.gen(function* () {
        const knowledgebaseIds = given.knowledgebaseIds ?? []
        const flowIds = given.flowIds ?? []
        const knowledgebases = yield* existingIds(sql, "knowledgebases", organizationId, knowledgebaseIds)
        const flows = yield* existingIds(sql, "flows", organizationId, flowIds)
        yield* refuseProblems(
          referenceProblems([
            { field: "knowledgebaseIds", noun: "Knowledgebase", ids: knowledgebaseIds, found: knowledgebases },
            { field: "flowIds", noun: "Flow", ids: flowIds, found: flows }
          ])
        )
      })

    const pageOf = <A extends { readonly id: string; readonly created_at: string }>(
      list: string,
      request: AgentListRequest,
      fetch: (page: PageRequest) => Effect.Effect<ReadonlyArray<A>>
    ) =>
      Effect.gen(function* () {
        const page = yield* cursors.request(list, request)
        const rows = yield* fetch(page)
        return cursors.page(list, page, rows, (row) => [row.created_at, row.id])
      })

    return {
      /** Creates an Agent with its first draft, unpublished. */
      create: (actor: Principal, input: CreateAgent): Effect.Effect<AgentDraft, InvalidRequest> =>
        inTransaction(
          Effect.gen(function* () {
            const org = actor.organization.id
            const definition: AgentDefinition = parseAgentDefinition(JSON.stringify(input))
            yield* checkReferences(org, definition)
            const id = newId()
            yield* repo.insert(org, id, { name: input.name, description: input.description ?? "", draft: agentDefinitionText(definition) }, isoAt(clock.now()))
            const row = yield* repo.itemForWrite(org, id)
            return toAgentDraft(row!, serverDefault)
          })
        ),

      /** The Agent's draft. */
      draft: (actor: Principal, id: string): Effect.Effect<AgentDraft, NotFound> =>
        Effect.flatMap(repo.item(actor.organization.id, id), (row) => (row ? Effect.succeed(toAgentDraft(row, serverDefault)) : Effect.fail(notFound(id)))),

      /** Changes the given properties of the draft (`model: null` goes back to the server's default); the published version is untouched. */
      updateDraft: (actor: Principal, id: string, patch: PatchAgentDraft): Effect.Effect<AgentDraft, InvalidRequest | NotFound> =>
        inTransaction(
          Effect.gen(function* () {
            if (Object.keys(patch).length === 0) return yield* new InvalidRequest({ message: `${emptyPatchMessage}.` })
            const org = actor.organization.id
            const row = yield* repo.itemForWrite(org, id)
            if (!row) return yield* notFound(id)
            const { name, description, ...changes } = patch
            yield* checkReferences(org, changes)
            const definition = { ...parseAgentDefinition(row.draft), ...changes } as AgentDefinition
            yield* repo.saveDraft(
              org,
              id,
              { name: name ?? row.name, description: description ?? row.description, draft: agentDefinitionText(definition) },
              isoAt(clock.now())
            )
            return toAgentDraft((yield* repo.itemForWrite(org, id))!, serverDefault)
          })
        ),

      /** Publishes the draft as the next immutable numbered version. */
      publish: (actor: Principal, id: string): Effect.Effect<PublishedVersion, NotFound> =>
        inTransaction(
          Effect.gen(function* () {
            const publishedAt = isoAt(clock.now())
            const version = yield* repo.publish(actor.organization.id, id, publishedAt)
            if (version === null) return yield* notFound(id)
            return { id, version, publishedAt }
          })
        ),

      /** Deletes the Agent and its versions (Admin role). */
      remove: (actor: Principal, id: string) =>
        removeItem(actor, "an Agent", inTransaction(repo.remove(actor.organization.id, id)), () => notFound(id)),

      /** The published Agent as it runs; a never-published Agent is `not_found`. */
      get: (actor: Principal, id: string): Effect.Effect<Agent, NotFound> =>
        Effect.flatMap(repo.published(actor.organization.id, id), (row) => (row ? Effect.succeed(toAgent(row, serverDefault)) : Effect.fail(notFound(id)))),

      /**
       * One page of Agents, oldest first: published ones (their published version's name and
       * description), or, with drafts (which needs `agents:write`), every Agent with its `published` flag.
       */
      list: (actor: Principal, request: AgentListRequest) =>
        Effect.gen(function* () {
          const org = actor.organization.id
          const list = listName("agents", org, request)
          if (!request.includeDrafts) {
            const page = yield* pageOf(list, request, (p) => repo.listPublished(org, request.updatedSince, p))
            return {
              items: page.items.map(({ id, name, description }): AgentSummary | AgentDraftItem => ({ id, name, description })),
              nextCursor: page.nextCursor
            }
          }
          yield* requireDraftsScope(actor, "agents:write")
          const page = yield* pageOf(list, request, (p) => repo.listWithDrafts(org, request.updatedSince, p))
          return {
            items: page.items.map((row): AgentSummary | AgentDraftItem => draftListItem(row)),
            nextCursor: page.nextCursor
          }
        })
    }
  }),
  dependencies: [AgentRepo.Default, Cursors.Default]
}) {}
