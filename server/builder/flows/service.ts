/**
 * Flows: create, edit the draft, publish immutable numbered versions, delete (Admin role), read the
 * published view and list. Bodies arrive as sent (unknown JSON): `checkFlowDefinition` names every
 * problem of a definition at once, then its references are looked up in the caller's organization,
 * all before anything is written. Knows nothing of HTTP, so MCP tools can reuse it.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either, Schema } from "effect"
import type { Principal } from "../../identity/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { InvalidRequest, NotFound } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { Cursors, type PageRequest } from "../../platform/pagination.js"
import { transactionsOn } from "../../platform/sql/database.js"
import { emptyPatchMessage, type PublishedVersion } from "../versions/domain.js"
import { refuseProblems } from "../versions/references.js"
import { draftListItem, type ItemListRequest, listName, removeItem, requireDraftsScope } from "../versions/operations.js"
import { ServerDefaultModel } from "../versions/model.js"
import { type CheckedFlow, checkFlowDefinition } from "./definition.js"
import { applyDraftPatch, type Flow, type FlowDefinition, type FlowDraft, type FlowDraftItem, FlowDraftPatch } from "./domain.js"
import { referenceProblemsOf } from "./references.js"
import { FlowRepo } from "./repo.js"
import { flowDefinitionText, storedFlowDefinition, toFlow, toFlowDraft } from "./stored.js"

/** How to list Flows. */
export type FlowListRequest = ItemListRequest

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A definition that passed every rule, or `invalid_request` naming every problem. */
const checked = (body: unknown): Effect.Effect<CheckedFlow, InvalidRequest> =>
  Either.match(checkFlowDefinition(body), {
    onLeft: ({ problems }) => Effect.fail(new InvalidRequest({ message: `${problems.join("; ")}.` })),
    onRight: Effect.succeed
  })

/**
 * The draft a patch (as sent) gives: `applyDraftPatch` when the patch decodes. A patch that does not
 * is laid over the draft as sent (each property replaced, `output: null` removed), so the whole
 * result's check names every problem at once, the patch's own with the rest.
 */
const patchedDraft = (current: FlowDefinition, patch: Record<string, unknown>): unknown => {
  const decoded = Schema.decodeUnknownEither(FlowDraftPatch)(patch)
  if (Either.isRight(decoded)) return applyDraftPatch(current, decoded.right)
  const { output, ...rest } = patch
  const laid: Record<string, unknown> = { ...current, ...rest }
  if (output !== null && output !== undefined) laid.output = output
  else if (output === null) delete laid.output
  return laid
}

/** Flow operations for a calling principal. */
export class FlowService extends Effect.Service<FlowService>()("svc/FlowService", {
  effect: Effect.gen(function* () {
    const repo = yield* FlowRepo
    const cursors = yield* Cursors
    const clock = yield* AppClock
    const sql = yield* SqlClient.SqlClient
    const inTransaction = transactionsOn(sql)
    const serverDefault = yield* ServerDefaultModel

    const notFound = (id: string) => new NotFound({ message: `No Flow '${id}' in this organization.` })

    const pageOf = <A extends { readonly id: string; readonly created_at: string }>(
      list: string,
      request: FlowListRequest,
      fetch: (page: PageRequest) => Effect.Effect<ReadonlyArray<A>>
    ) =>
      Effect.gen(function* () {
        const page = yield* cursors.request(list, request)
        const rows = yield* fetch(page)
        return cursors.page(list, page, rows, (row) => [row.created_at, row.id])
      })

    return {
      /** Creates a Flow from a body as sent, with its first draft, unpublished. */
      create: (actor: Principal, body: unknown): Effect.Effect<FlowDraft, InvalidRequest> =>
        Effect.gen(function* () {
          const flow = yield* checked(body)
          const { name, description } = flow.definition
          return yield* inTransaction(
            Effect.gen(function* () {
              const org = actor.organization.id
              yield* refuseProblems(yield* referenceProblemsOf(sql, org, flow))
              const id = newId()
              yield* repo.insert(org, id, { name, description: description ?? "", draft: flowDefinitionText(flow.definition) }, isoAt(clock.now()))
              return toFlowDraft((yield* repo.itemForWrite(org, id))!, serverDefault)
            })
          )
        }),

      /** The Flow's draft. */
      draft: (actor: Principal, id: string): Effect.Effect<FlowDraft, NotFound> =>
        Effect.flatMap(repo.item(actor.organization.id, id), (row) => (row ? Effect.succeed(toFlowDraft(row, serverDefault)) : Effect.fail(notFound(id)))),

      /**
       * Replaces the properties a patch (as sent) gives, at least one; the whole result is checked
       * again (every problem named) and its references looked up before it is saved. The published
       * version is untouched.
       */
      updateDraft: (actor: Principal, id: string, patch: unknown): Effect.Effect<FlowDraft, InvalidRequest | NotFound> =>
        inTransaction(
          Effect.gen(function* () {
            if (!isRecord(patch)) return yield* new InvalidRequest({ message: "The body must be a JSON object." })
            if (Object.keys(patch).length === 0) return yield* new InvalidRequest({ message: `${emptyPatchMessage}.` })
            const org = actor.organization.id
            const row = yield* repo.itemForWrite(org, id)
            if (!row) return yield* notFound(id)
            const flow = yield* checked(patchedDraft(storedFlowDefinition(row.name, row.description, row.draft), patch))
            yield* refuseProblems(yield* referenceProblemsOf(sql, org, flow))
            const { name, description } = flow.definition
            yield* repo.saveDraft(org, id, { name, description: description ?? "", draft: flowDefinitionText(flow.definition) }, isoAt(clock.now()))
            return toFlowDraft((yield* repo.itemForWrite(org, id))!, serverDefault)
          })
        ),

      /**
       * Publishes the draft as the next immutable numbered version. Its references are looked up
       * again first (an Agent or Knowledgebase deleted since the draft was saved is named).
       */
      publish: (actor: Principal, id: string): Effect.Effect<PublishedVersion, InvalidRequest | NotFound> =>
        inTransaction(
          Effect.gen(function* () {
            const org = actor.organization.id
            const row = yield* repo.itemForWrite(org, id)
            if (!row) return yield* notFound(id)
            const flow = yield* checked(storedFlowDefinition(row.name, row.description, row.draft))
            yield* refuseProblems(yield* referenceProblemsOf(sql, org, flow))
            const publishedAt = isoAt(clock.now())
            const version = yield* repo.publish(org, id, publishedAt)
            if (version === null) return yield* notFound(id)
            return { id, version, publishedAt }
          })
        ),

      /** Deletes the Flow and its versions (Admin role). */
      remove: (actor: Principal, id: string) =>
        removeItem(actor, "a Flow", inTransaction(repo.remove(actor.organization.id, id)), () => notFound(id)),

      /** The published Flow with its inputs; a never-published Flow is `not_found`. */
      get: (actor: Principal, id: string): Effect.Effect<Flow, NotFound> =>
        Effect.flatMap(repo.published(actor.organization.id, id), (row) => (row ? Effect.succeed(toFlow(row)) : Effect.fail(notFound(id)))),

      /**
       * One page of Flows, oldest first: published ones (their published version with its inputs),
       * or, with drafts (which needs `flows:write`), every Flow with its `published` flag.
       */
      list: (actor: Principal, request: FlowListRequest) =>
        Effect.gen(function* () {
          const org = actor.organization.id
          const list = listName("flows", org, request)
          if (!request.includeDrafts) {
            const page = yield* pageOf(list, request, (p) => repo.listPublished(org, request.updatedSince, p))
            return { items: page.items.map((row): Flow | FlowDraftItem => toFlow(row)), nextCursor: page.nextCursor }
          }
          yield* requireDraftsScope(actor, "flows:write")
          const page = yield* pageOf(list, request, (p) => repo.listWithDrafts(org, request.updatedSince, p))
          return {
            items: page.items.map((row): Flow | FlowDraftItem => draftListItem(row)),
            nextCursor: page.nextCursor
          }
        })
    }
  }),
  dependencies: [FlowRepo.Default, Cursors.Default]
}) {}
