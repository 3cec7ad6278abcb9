/**
 * Pages and folders: create, read, edit (patch, description), append, move, revision history,
 * review of agent writes, and the changes feed. Knows nothing of HTTP.
 *
 * Writes compute outside the transaction (patching, link parsing) and commit only if the page is
 * still at the revision they started from; a concurrent writer makes them start again. Where
 * writers run in parallel (PostgreSQL) an edit patches inside its transaction instead, from the
 * row it reads there (one read of the page fewer).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { authorOf, type Principal } from "../../identity/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { InvalidRequest, NotFound, PayloadTooLarge } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { Cursors } from "../../platform/pagination.js"
import { transactionsOn } from "../../platform/sql/database.js"
import { CacheVersions } from "../../platform/sql/cache-versions.js"
import { dataVersionCache } from "../../platform/sql/data-version-cache.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { statementsOn, type TxBody, WriteTransactions } from "../../platform/sql/write-fast-path.js"
import { extractLinks, type Links, resolveLinks } from "./links.js"
import {
  type CreatePage,
  defaultTemplate,
  folderTemplate,
  type Page,
  type PageWrite
} from "./domain.js"
import {
  findPageTx,
  insertRevisionTx,
  PageRepo,
  type PageRow,
  setLinksTx,
  sourceNamesInTx,
  type StoredRevision,
  titlesOfTx,
  toSummary,
  touchKnowledgebaseTx,
  updateContentTx
} from "./repo.js"
import { applyPatch, describeRefusal, describeTooLarge, fitsPageBody, maxPageBodyBytes, type PatchOperation } from "./patch.js"
import { ActivityLog } from "../activity/service.js"
import type { Change } from "../changes/domain.js"
import { ChangeRepo, recordChangeTx } from "../changes/repo.js"
import { reviewPathOf } from "../knowledgebases/domain.js"
import { KnowledgebaseRepo } from "../knowledgebases/repo.js"
import { buildIndex, type IndexParentOption, type PageForest, pageForest, pageOfItems, resolveParent } from "./tree.js"

/** What a pending revision will do when approved. */
type Operation =
  | { readonly kind: "create"; readonly page: PageRow }
  | { readonly kind: "edit" | "append"; readonly patch: ReadonlyArray<PatchOperation>; readonly description: string | null }

const hookLength = 160
const forestCacheSize = 32
const attempts = 3

/** A short plain-text teaser of a body: its first line of text. */
export const hookOf = (markdown: string): string => {
  const line = markdown
    .split("\n")
    .map((l) => l.replace(/^\s{0,3}(#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)/, "").replace(/[*_`~[\]]/g, "").trim())
    .find((l) => l.length > 0 && !/^(-{3,}|={3,})$/.test(l))
  return (line ?? "").slice(0, hookLength)
}

/** Who a write is recorded against: the member, or the organization key by name. */

const tooLarge = () =>
  new PayloadTooLarge({ message: `A page body must be under ${maxPageBodyBytes / 1024} KB.` })

/** Page operations for a calling principal. */
export class PageService extends Effect.Service<PageService>()("svc/PageService", {
  effect: Effect.gen(function* () {
    const pages = yield* PageRepo
    const feed = yield* ChangeRepo
    const activity = yield* ActivityLog
    const sql = yield* SqlClient.SqlClient
    const inTransaction = transactionsOn(sql)
    const statements = statementsOn(sql)
    const writes = yield* WriteTransactions
    const knowledgebases = yield* KnowledgebaseRepo
    const cursors = yield* Cursors
    const clock = yield* AppClock
    const now = () => isoAt(clock.now())

    const knowledgebase = (actor: Principal, id: string) => knowledgebases.found(actor.organization.id, id)
    const pageNotFound = (id: string) => new NotFound({ message: `No page '${id}' in this Knowledgebase.` })

    /**
     * Arranged page trees of recently listed Knowledgebases, valid while no page was written since
     * (`CacheVersions`), so repeated listings skip reading every row.
     */
    const forests = dataVersionCache<string, PageForest>((yield* CacheVersions).of(["pages"]), forestCacheSize)
    const forestOf = (knowledgebaseId: string) => forests.get(knowledgebaseId, Effect.map(pages.treeRows(knowledgebaseId), pageForest))
    const livePage = (knowledgebaseId: string, pageId: string) =>
      Effect.flatMap(pages.find(knowledgebaseId, pageId), (row) => (row ? Effect.succeed(row) : Effect.fail(pageNotFound(pageId))))

    /** Resolves a body's links against the Knowledgebase, inside the write's transaction. */
    const linksOf = (knowledgebaseId: string, markdown: string) => statements(linksOfTx(knowledgebaseId, markdown))

    /** A review item still waiting, read inside the approving or rejecting transaction. */
    const pendingRevision = (organizationId: string, revisionId: string) =>
      Effect.gen(function* () {
        const revision = yield* pages.revisionForUpdate(organizationId, revisionId)
        if (!revision) return yield* new NotFound({ message: `No review item '${revisionId}' in this organization.` })
        if (revision.status !== "pending_review") {
          return yield* new InvalidRequest({ message: `Review item '${revisionId}' was already ${revision.status}.` })
        }
        return revision
      })

    /** The page with a new body and description, one revision further. */
    const withBody = (row: PageRow, markdown: string, description: string, at: string): PageRow => ({
      ...row,
      markdown,
      description,
      hook: hookOf(markdown),
      revision: row.revision + 1,
      updated_at: at
    })

    const reviews = (actor: Principal, row: { template_key: string }) =>
      actor.organization.gates.has("review") && row.template_key !== folderTemplate

    const change = (row: PageRow, kind: string, at: string): Change => ({
      knowledgebaseId: row.knowledgebase_id,
      type: row.template_key === folderTemplate ? "folder" : "page",
      id: row.id,
      change: kind,
      changedAt: at
    })

    const storedRevision = (
      actor: Principal,
      row: PageRow,
      fields: Pick<StoredRevision, "kind" | "status" | "number" | "title" | "description" | "markdown"> & { operation: Operation },
      at: string
    ): StoredRevision => ({
      id: newId(),
      organization_id: actor.organization.id,
      knowledgebase_id: row.knowledgebase_id,
      page_id: row.id,
      number: fields.number,
      kind: fields.kind,
      status: fields.status,
      operation: JSON.stringify(fields.operation),
      title: fields.title,
      description: fields.description,
      markdown: fields.markdown,
      author: authorOf(actor),
      created_at: at,
      reviewed_at: null
    })

    /** Edits (patch, description or append) with optimistic retries. */
    const edit = (
      actor: Principal,
      knowledgebaseId: string,
      pageId: string,
      kind: "edit" | "append",
      patch: ReadonlyArray<PatchOperation>,
      description: string | null
    ) =>
      Effect.gen(function* () {
        yield* knowledgebase(actor, knowledgebaseId)
        /** The patched body of `page`, or the refusal to answer with. */
        const patchedBody = (page: { readonly template_key: string; readonly markdown: string }) => {
          if (page.template_key === folderTemplate && patch.length > 0) {
            return new InvalidRequest({ message: "A folder has no content of its own: it takes only a description." })
          }
          const patched = patch.length === 0 ? { _tag: "Applied" as const, markdown: page.markdown } : applyPatch(page.markdown, patch)
          if (patched._tag === "Refused") return new InvalidRequest({ message: describeRefusal(patched) })
          if (patched._tag === "TooLarge") return new PayloadTooLarge({ message: describeTooLarge(patched) })
          if (!fitsPageBody(patched.markdown)) return tooLarge()
          return patched
        }
        for (let attempt = 1; ; attempt++) {
          // SQLite (one writer, `synchronous`): patch before the transaction, from the page as it is
          // read now, so the writer is held only for the statements. PostgreSQL (writers in
          // parallel): patch inside it, from the row it reads, sparing a read of the page before it.
          const current = writes.synchronous ? yield* livePage(knowledgebaseId, pageId) : null
          const patchedFirst = current === null ? null : patchedBody(current)
          if (patchedFirst !== null && patchedFirst._tag !== "Applied") return yield* patchedFirst
          const result = yield* writes.run(function* () {
            const row = yield* findPageTx(knowledgebaseId, pageId)
            if (!row) return "notFound" as const
            // The last attempt patches the page as it is under the write lock: concurrent writers
            // cannot starve it.
            if (current !== null && row.revision !== current.revision && attempt < attempts) return null
            const patched = patchedFirst !== null && row.revision === current?.revision ? patchedFirst : patchedBody(row)
            if (patched._tag !== "Applied") return { refused: patched }
            const nextDescription = description ?? row.description
            const links = yield* linksOfTx(knowledgebaseId, patched.markdown)
            const at = now()
            const operation: Operation = { kind, patch, description }
            if (reviews(actor, row)) {
              const revision = storedRevision(
                actor,
                row,
                { kind, status: "pending_review", number: null, title: row.title, description: nextDescription, markdown: patched.markdown, operation },
                at
              )
              yield* insertRevisionTx(revision)
              return { status: "pending_review", page: toSummary(row), revisionId: revision.id, reviewPath: reviewPathOf(knowledgebaseId, revision.id), links } satisfies PageWrite
            }
            const updated = withBody(row, patched.markdown, nextDescription, at)
            yield* updateContentTx(row.id, { markdown: updated.markdown, description: updated.description, hook: updated.hook, revision: updated.revision, at })
            const revision = storedRevision(
              actor,
              updated,
              { kind, status: "applied", number: updated.revision, title: row.title, description: nextDescription, markdown: patched.markdown, operation },
              at
            )
            yield* insertRevisionTx(revision)
            yield* setLinksTx(row.id, links.pages.map((page) => page.id))
            yield* recordChangeTx(actor.organization.id, change(updated, "updated", at))
            yield* touchKnowledgebaseTx(knowledgebaseId, 0, at)
            return { status: "applied", page: toSummary(updated), revisionId: revision.id, reviewPath: null, links } satisfies PageWrite
          })
          if (result === "notFound") return yield* pageNotFound(pageId)
          if (result && "refused" in result) return yield* result.refused
          if (result) return result
          if (attempt >= attempts) {
            return yield* new InvalidRequest({ message: "The page kept changing while this edit was applied; send it again." })
          }
        }
      })

    return {
      /** Creates a page or folder (a page write waits for review when the organization reviews agent writes). */
      create: (actor: Principal, knowledgebaseId: string, input: CreatePage) =>
        Effect.gen(function* () {
          yield* knowledgebase(actor, knowledgebaseId)
          const templateKey = input.templateKey ?? defaultTemplate
          const isFolder = templateKey === folderTemplate
          if (isFolder && input.bodyMarkdown !== undefined) {
            return yield* new InvalidRequest({
              message: "bodyMarkdown: a folder has no content of its own; give it a description instead."
            })
          }
          const markdown = input.bodyMarkdown ?? ""
          if (!fitsPageBody(markdown)) return yield* tooLarge()
          const parentPageId = input.parentPageId ?? null
          return yield* inTransaction(
            Effect.gen(function* () {
              if (parentPageId !== null && !(yield* pages.findForUpdate(knowledgebaseId, parentPageId))) {
                return yield* new NotFound({ message: `parentPageId: no page '${parentPageId}' in this Knowledgebase.` })
              }
              const links = yield* linksOf(knowledgebaseId, markdown)
              const at = now()
              const row: PageRow = {
                id: newId(),
                organization_id: actor.organization.id,
                knowledgebase_id: knowledgebaseId,
                parent_page_id: parentPageId,
                title: input.title,
                description: input.description ?? "",
                template_key: templateKey,
                markdown,
                hook: hookOf(markdown),
                revision: 1,
                author: authorOf(actor),
                created_at: at,
                updated_at: at
              }
              const pending = reviews(actor, row)
              const revision = storedRevision(
                actor,
                row,
                {
                  kind: "create",
                  status: pending ? "pending_review" : "applied",
                  number: pending ? null : 1,
                  title: row.title,
                  description: row.description,
                  markdown,
                  operation: { kind: "create", page: row }
                },
                at
              )
              if (!pending) {
                yield* pages.insertPage(row)
                yield* pages.setLinks(row.id, links.pages.map((page) => page.id))
                yield* feed.record(actor.organization.id, change(row, "created", at))
                yield* pages.touchKnowledgebase(knowledgebaseId, isFolder ? 0 : 1, at)
              }
              yield* pages.insertRevision(revision)
              return {
                status: pending ? "pending_review" : "applied",
                page: toSummary(row),
                revisionId: revision.id,
                reviewPath: pending ? reviewPathOf(knowledgebaseId, revision.id) : null,
                links
              } satisfies PageWrite
            })
          )
        }),

      /**
       * The page index in tree order: the whole tree, the top level (`parentPageId` "null"), or under
       * a page or folder given by id or exact folder title; `depth` levels deep; paged.
       */
      index: (
        actor: Principal,
        knowledgebaseId: string,
        params: {
          readonly parentPageId?: string | undefined
          readonly depth?: number | undefined
          readonly updatedSince?: string | undefined
          readonly limit?: number | undefined
          readonly cursor?: string | undefined
        }
      ) =>
        Effect.gen(function* () {
          yield* knowledgebase(actor, knowledgebaseId)
          const forest = yield* forestOf(knowledgebaseId)
          let parent: IndexParentOption = { kind: "all" }
          if (params.parentPageId === "null") parent = { kind: "top" }
          else if (params.parentPageId !== undefined) {
            const resolved = resolveParent(forest, params.parentPageId)
            if (resolved.kind === "not_found") {
              return yield* new NotFound({ message: `parentPageId: no page or folder '${params.parentPageId}' in this Knowledgebase.` })
            }
            if (resolved.kind === "ambiguous") {
              return yield* new InvalidRequest({
                message: `parentPageId: several folders are named '${params.parentPageId}' (${resolved.ids.join(", ")}); give an id.`
              })
            }
            parent = resolved
          }
          const built = buildIndex(forest, {
            parent,
            ...(params.depth === undefined ? {} : { depth: params.depth }),
            ...(params.updatedSince === undefined ? {} : { updatedSince: params.updatedSince })
          })
          const list = `pages:${actor.organization.id}:${knowledgebaseId}:${JSON.stringify([parent, params.depth ?? null, params.updatedSince ?? null])}`
          const request = yield* cursors.request(list, params)
          const after = request.after === null ? null : { index: Number(request.after[0]), id: String(request.after[1]) }
          const paged = pageOfItems(built.items, { limit: request.limit, after })
          if (paged.stale) {
            return yield* new InvalidRequest({ message: "cursor: the tree changed since this cursor was made; start again without a cursor." })
          }
          const files = built.parent === null ? undefined : yield* pages.sourcesFiledUnder(built.parent.id)
          return {
            parent: built.parent,
            files,
            items: paged.items,
            nextCursor: paged.next === null ? null : cursors.encode(list, [paged.next.index, paged.next.id])
          }
        }),

      /** A page read in full, with its links both ways and its children. */
      get: (actor: Principal, knowledgebaseId: string, pageId: string) =>
        Effect.gen(function* () {
          yield* knowledgebase(actor, knowledgebaseId)
          const row = yield* livePage(knowledgebaseId, pageId)
          const { related, referencedBy } = yield* pages.linksOf(row.id)
          const children = yield* pages.children(knowledgebaseId, row.id)
          const attached = yield* pages.sourcesFiledUnder(row.id)
          yield* activity.record(actor, { action: "read_page", knowledgebaseId, results: [{ kind: "page", id: row.id, title: row.title }] })
          return {
            ...toSummary(row),
            markdown: row.markdown,
            attachedFiles: attached.map((source) => source.name),
            relatedPages: related.map(({ id, title }) => ({ id, title })),
            referencedBy: referencedBy.map(({ id, title }) => ({ id, title })),
            children: children.map((child) => ({
              id: child.id,
              title: child.title,
              description: child.description,
              isFolder: child.template_key === folderTemplate,
              childCount: child.child_count
            }))
          } satisfies Page
        }),

      /** Applies `patch` and/or a new `description`; at least one is required. */
      patch: (actor: Principal, knowledgebaseId: string, pageId: string, input: { patch?: ReadonlyArray<PatchOperation> | undefined; description?: string | undefined }) =>
        input.patch === undefined && input.description === undefined
          ? Effect.fail(new InvalidRequest({ message: "Give `patch`, `description` or both." }))
          : edit(actor, knowledgebaseId, pageId, "edit", input.patch ?? [], input.description ?? null),

      /** Adds `text` to the end of a page. */
      append: (actor: Principal, knowledgebaseId: string, pageId: string, text: string) =>
        edit(actor, knowledgebaseId, pageId, "append", [{ op: "append", text }], null),

      /** Files a page or folder under another page or folder of the same Knowledgebase, or at the top. */
      move: (actor: Principal, knowledgebaseId: string, pageId: string, parentPageId: string | null) =>
        Effect.gen(function* () {
          yield* knowledgebase(actor, knowledgebaseId)
          return yield* inTransaction(
            Effect.gen(function* () {
              const row = yield* pages.findForUpdate(knowledgebaseId, pageId)
              if (!row) return yield* pageNotFound(pageId)
              if (parentPageId !== null) {
                if (!(yield* pages.findForUpdate(knowledgebaseId, parentPageId))) {
                  return yield* new NotFound({ message: `parentPageId: no page '${parentPageId}' in this Knowledgebase.` })
                }
                if ((yield* pages.ancestorsOf(parentPageId)).includes(pageId)) {
                  return yield* new InvalidRequest({ message: "parentPageId: a page cannot move inside its own sub-pages." })
                }
              }
              const at = now()
              const moved: PageRow = { ...row, parent_page_id: parentPageId, updated_at: at }
              yield* pages.moveTo(pageId, parentPageId, at)
              yield* feed.record(actor.organization.id, change(moved, "moved", at))
              yield* pages.touchKnowledgebase(knowledgebaseId, 0, at)
              return toSummary(moved)
            })
          )
        }),

      /** A page's revision history, newest first. */
      revisions: (actor: Principal, knowledgebaseId: string, pageId: string, params: { limit?: number | undefined; cursor?: string | undefined }) =>
        Effect.gen(function* () {
          yield* knowledgebase(actor, knowledgebaseId)
          yield* livePage(knowledgebaseId, pageId)
          const list = `revisions:${actor.organization.id}:${pageId}`
          const request = yield* cursors.request(list, params)
          const rows = yield* pages.revisions(pageId, request)
          const page = cursors.page(list, request, rows, (row) => [row.seq])
          return { items: page.items.map((row) => row.revision), nextCursor: page.nextCursor }
        }),

      /** Page writes of an organization waiting for review, oldest first (the review inbox). */
      pendingReviews: (organizationId: string) =>
        Effect.map(pages.pendingRevisions(organizationId), (rows) =>
          rows.map((row) => ({
            id: row.id,
            kind: `page_${row.kind}` as const,
            knowledgebaseId: row.knowledgebase_id,
            pageId: row.page_id,
            title: row.title,
            author: row.author,
            createdAt: row.created_at
          }))
        ),

      /**
       * Approves a pending page write: its operation is applied to the page as it is now (so an
       * approval never wipes what changed since), and it becomes a numbered revision.
       */
      approve: (organizationId: string, revisionId: string) =>
        inTransaction(
          Effect.gen(function* () {
            const revision = yield* pendingRevision(organizationId, revisionId)
            const operation = JSON.parse(revision.operation) as Operation
            const at = now()
            let live: PageRow
            let created = false
            if (operation.kind === "create") {
              const parent = operation.page.parent_page_id
              if (parent !== null && !(yield* pages.findForUpdate(revision.knowledgebase_id, parent))) {
                return yield* new InvalidRequest({ message: "The page's parent no longer exists; reject this item instead." })
              }
              live = { ...operation.page, updated_at: at }
              yield* pages.insertPage(live)
              created = true
            } else {
              const current = yield* pages.findForUpdate(revision.knowledgebase_id, revision.page_id)
              if (!current) return yield* pageNotFound(revision.page_id)
              const patched = applyPatch(current.markdown, operation.patch)
              if (patched._tag === "Refused") {
                return yield* new InvalidRequest({ message: `No longer applies to the page as it is now: ${describeRefusal(patched)}` })
              }
              if (patched._tag === "TooLarge") return yield* new PayloadTooLarge({ message: describeTooLarge(patched) })
              if (!fitsPageBody(patched.markdown)) return yield* tooLarge()
              live = withBody(current, patched.markdown, operation.description ?? current.description, at)
              yield* pages.updateContent(live.id, { markdown: live.markdown, description: live.description, hook: live.hook, revision: live.revision, at })
            }
            const links = yield* linksOf(live.knowledgebase_id, live.markdown)
            yield* pages.settleRevision(revisionId, "applied", live.revision, at)
            yield* pages.setLinks(live.id, links.pages.map((page) => page.id))
            yield* feed.record(organizationId, change(live, created ? "created" : "updated", at))
            yield* pages.touchKnowledgebase(live.knowledgebase_id, created && live.template_key !== folderTemplate ? 1 : 0, at)
            return { id: revisionId, status: "applied" as const, page: toSummary(live) }
          })
        ),

      /** Rejects a pending page write: the live page stays as it is; the revision is kept as rejected. */
      reject: (organizationId: string, revisionId: string) =>
        inTransaction(
          Effect.gen(function* () {
            const revision = yield* pendingRevision(organizationId, revisionId)
            yield* pages.settleRevision(revisionId, "rejected", null, now())
            return { id: revisionId, status: "rejected" as const }
          })
        )
    }
  }),
  dependencies: [PageRepo.Default, ChangeRepo.Default, ActivityLog.Default, KnowledgebaseRepo.Default, Cursors.Default, ReadConnection.Default, WriteTransactions.Default, CacheVersions.Default]
}) {}

/** Resolves a body's links against the Knowledgebase, as a transaction body step. */
function* linksOfTx(knowledgebaseId: string, markdown: string): TxBody<Links> {
  const found = extractLinks(markdown)
  const titles = yield* titlesOfTx(knowledgebaseId, found.pages)
  const names = yield* sourceNamesInTx(knowledgebaseId, found.sources)
  return resolveLinks(found, { pages: titles, sources: names })
}
