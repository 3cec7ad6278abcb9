/**
 * Apps: create, edit the draft (members and the Transaction Service), publish immutable numbered
 * versions that pin their members' published versions, delete (Admin role), read the published
 * view, and the two listings. Knows nothing of HTTP, so MCP tools can reuse it.
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
import { existingIds, publishedVersions } from "../versions/reference-repo.js"
import { pinProblems, referenceProblems, refuseProblems } from "../versions/references.js"
import { draftListItem, type ItemListRequest, listName, removeItem, requireDraftsScope } from "../versions/operations.js"
import { ServerDefaultModel } from "../versions/model.js"
import { appDefinitionText, type AppVersionDefinition, parseAppDefinition, toApp, toAppDraft } from "./definition.js"
import type { App, AppDefinition, AppDraft, AppDraftItem, CreateApp, PatchAppDraft, PublishedApp } from "./domain.js"
import { jsonSchemaProblems } from "./json-schema.js"
import { type AppContractColumns, AppRepo, type Positioned } from "./repo.js"

/** How to list Apps. */
export type AppListRequest = ItemListRequest

/** App operations for a calling principal. */
export class AppService extends Effect.Service<AppService>()("svc/AppService", {
  effect: Effect.gen(function* () {
    const repo = yield* AppRepo
    const cursors = yield* Cursors
    const clock = yield* AppClock
    const sql = yield* SqlClient.SqlClient
    const inTransaction = transactionsOn(sql)
    const serverDefault = yield* ServerDefaultModel

    const notFound = (id: string) => new NotFound({ message: `No App '${id}' in this organization.` })

    /** Refuses member references (the lists given) that are not the organization's, naming every one. */
    const referenceChecks = (organizationId: string, given: { readonly agentIds?: ReadonlyArray<string> | undefined; readonly flowIds?: ReadonlyArray<string> | undefined }) =>
      Effect.gen(function* () {
        const agentIds = given.agentIds ?? []
        const flowIds = given.flowIds ?? []
        return referenceProblems([
          { field: "agentIds", noun: "Agent", ids: agentIds, found: yield* existingIds(sql, "agents", organizationId, agentIds) },
          { field: "flowIds", noun: "Flow", ids: flowIds, found: yield* existingIds(sql, "flows", organizationId, flowIds) }
        ])
      })

    /** The problems of a Transaction Service: schemas that are not JSON Schema, or a service on without both. */
    const apiProblems = (api: AppDefinition["api"]) => {
      const problems = [...jsonSchemaProblems("api.inputSchema", api.inputSchema), ...jsonSchemaProblems("api.outputSchema", api.outputSchema)]
      if (api.transactionEnabled && (api.inputSchema === null || api.outputSchema === null)) {
        problems.push("api: the Transaction Service needs both inputSchema and outputSchema while transactionEnabled is true")
      }
      return problems
    }

    const pageOf = <A>(list: string, request: AppListRequest, fetch: (page: PageRequest) => Effect.Effect<ReadonlyArray<Positioned<A>>>) =>
      Effect.gen(function* () {
        const page = yield* cursors.request(list, request)
        const rows = yield* fetch(page)
        const result = cursors.page(list, page, rows, (row) => [row.createdAt, row.id])
        return { items: result.items.map((row) => row.item), nextCursor: result.nextCursor }
      })

    return {
      /** Creates an App with its first draft, unpublished (Transaction Service off). */
      create: (actor: Principal, input: CreateApp): Effect.Effect<AppDraft, InvalidRequest> =>
        inTransaction(
          Effect.gen(function* () {
            const org = actor.organization.id
            yield* refuseProblems(yield* referenceChecks(org, input))
            const definition = parseAppDefinition(JSON.stringify({ greeting: input.greeting, agentIds: input.agentIds, flowIds: input.flowIds }))
            const id = newId()
            yield* repo.insert(org, id, { name: input.name, description: input.description ?? "", draft: appDefinitionText(definition) }, isoAt(clock.now()))
            return toAppDraft((yield* repo.itemForWrite(org, id))!, serverDefault)
          })
        ),

      /** The App's draft. */
      draft: (actor: Principal, id: string): Effect.Effect<AppDraft, NotFound> =>
        Effect.flatMap(repo.item(actor.organization.id, id), (row) => (row ? Effect.succeed(toAppDraft(row, serverDefault)) : Effect.fail(notFound(id)))),

      /**
       * Changes the given properties of the draft (`api` only the properties it gives); member
       * references and JSON Schemas are checked first, every problem named. The published version
       * is untouched.
       */
      updateDraft: (actor: Principal, id: string, patch: PatchAppDraft): Effect.Effect<AppDraft, InvalidRequest | NotFound> =>
        inTransaction(
          Effect.gen(function* () {
            if (Object.keys(patch).length === 0) return yield* new InvalidRequest({ message: `${emptyPatchMessage}.` })
            const org = actor.organization.id
            const row = yield* repo.itemForWrite(org, id)
            if (!row) return yield* notFound(id)
            const current = parseAppDefinition(row.draft)
            const { name, description, api, ...members } = patch
            const definition = { ...current, ...members, api: { ...current.api, ...api } } as AppDefinition
            yield* refuseProblems([...(yield* referenceChecks(org, members)), ...(api === undefined ? [] : apiProblems(definition.api))])
            yield* repo.saveDraft(
              org,
              id,
              { name: name ?? row.name, description: description ?? row.description, draft: appDefinitionText(definition) },
              isoAt(clock.now())
            )
            return toAppDraft((yield* repo.itemForWrite(org, id))!, serverDefault)
          })
        ),

      /**
       * Publishes the draft as the next immutable numbered version, pinning the published version of
       * each member Agent and Flow; a member that is missing or never published is refused by name.
       */
      publish: (actor: Principal, id: string): Effect.Effect<PublishedVersion, InvalidRequest | NotFound> =>
        inTransaction(
          Effect.gen(function* () {
            const org = actor.organization.id
            const row = yield* repo.itemForWrite(org, id)
            if (!row) return yield* notFound(id)
            const draft = parseAppDefinition(row.draft)
            const agents = yield* publishedVersions(sql, "agents", org, draft.agentIds)
            const flows = yield* publishedVersions(sql, "flows", org, draft.flowIds)
            yield* refuseProblems(
              pinProblems([
                { field: "agentIds", noun: "Agent", ids: draft.agentIds, versions: agents },
                { field: "flowIds", noun: "Flow", ids: draft.flowIds, versions: flows }
              ])
            )
            const pinned: AppVersionDefinition = {
              greeting: draft.greeting,
              agents: draft.agentIds.map((member) => ({ id: member, version: agents.get(member)! })),
              flows: draft.flowIds.map((member) => ({ id: member, version: flows.get(member)! }))
            }
            const publishedAt = isoAt(clock.now())
            const version = yield* repo.publish(org, id, publishedAt, {
              definition: JSON.stringify(pinned),
              conversation_enabled: 1,
              transaction_enabled: draft.api.transactionEnabled ? 1 : 0,
              input_schema: draft.api.inputSchema === null ? null : JSON.stringify(draft.api.inputSchema),
              output_schema: draft.api.outputSchema === null ? null : JSON.stringify(draft.api.outputSchema)
            })
            if (version === null) return yield* notFound(id)
            return { id, version, publishedAt }
          })
        ),

      /** Deletes the App and its versions (Admin role). */
      remove: (actor: Principal, id: string) =>
        removeItem(actor, "an App", inTransaction(repo.remove(actor.organization.id, id)), () => notFound(id)),

      /** The published App with its pinned members; a never-published App is `not_found`. */
      get: (actor: Principal, id: string): Effect.Effect<App, NotFound> =>
        Effect.flatMap(repo.published<AppContractColumns>(actor.organization.id, id), (row) =>
          row ? Effect.succeed(toApp(row, serverDefault)) : Effect.fail(notFound(id))
        ),

      /**
       * One page of Apps, oldest first: published ones with their pinned contract, or, with drafts
       * (which needs `apps:write`), every App with its `published` flag.
       */
      list: (actor: Principal, request: AppListRequest) =>
        Effect.gen(function* () {
          const org = actor.organization.id
          const list = listName("apps", org, request)
          if (!request.includeDrafts) {
            return yield* pageOf<PublishedApp | AppDraftItem>(list, request, (page) =>
              repo.listPublished(org, request.updatedSince, page)
            )
          }
          yield* requireDraftsScope(actor, "apps:write")
          return yield* pageOf<PublishedApp | AppDraftItem>(list, request, (page) =>
            repo.listWithDrafts(org, request.updatedSince, page)
          )
        })
    }
  }),
  dependencies: [AppRepo.Default, Cursors.Default]
}) {}
