/**
 * Sources (documents): upload (inline text, a file, or a `url` the worker fetches), list, read
 * (refreshing a processing source's status), move, and the review of uploads. Knows nothing of
 * HTTP. The original and an ingestion job commit with the source; the worker does the rest.
 *
 * A document lives in one place across the organization: the same bytes uploaded to another
 * Knowledgebase attach the existing document there, and filing it in one Knowledgebase moves it out
 * of a folder in another.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Queue } from "effect"
import { lookup } from "node:dns/promises"
import { createHash } from "node:crypto"
import { authorOf, planCaps, type Principal } from "../../identity/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { InvalidRequest, NotFound, PayloadTooLarge, PlanLimit } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { checkUrl } from "../../platform/net/address-policy.js"
import { Cursors } from "../../platform/pagination.js"
import { transactionsOn } from "../../platform/sql/database.js"
import { ActivityLog } from "../activity/service.js"
import type { Source } from "../knowledgebases/domain.js"
import type { DocumentType } from "./extract.js"
import { IngestionConfig, seconds } from "./ingestion-config.js"
import type { Change } from "../changes/domain.js"
import { ChangeRepo } from "../changes/repo.js"
import { PageRepo } from "../pages/repo.js"
import { reviewPathOf } from "../knowledgebases/domain.js"
import { KnowledgebaseRepo } from "../knowledgebases/repo.js"
import { passageScope } from "../search/scope.js"
import { type CreateSourceJson, maxInlineContentBytes, type SourceWrite } from "./domain.js"
import { type SourceRow, SourceRepo, toSource } from "./repo.js"

/** What an upload carries. */
export type SourceContent =
  | { readonly kind: "inline"; readonly type: "md" | "txt"; readonly text: string }
  | { readonly kind: "file"; readonly type: DocumentType; readonly bytes: Uint8Array; readonly contentType: string }
  | { readonly kind: "url"; readonly url: string }

/** An upload, whichever way it arrived. */
export interface UploadInput {
  readonly name: string
  readonly parentPageId: string | null
  readonly content: SourceContent
  readonly createdVia: "api" | "mcp"
}

const inlineTooLarge = () =>
  new PayloadTooLarge({ message: `Inline content is limited to ${maxInlineContentBytes / 1_000_000} MB; upload a file instead.` })

/** The upload a JSON body describes: `name` and exactly one of `contentMarkdown`, `contentText`, `url`. */
export const uploadFromJson = (body: CreateSourceJson, createdVia: "api" | "mcp"): Effect.Effect<UploadInput, InvalidRequest | PayloadTooLarge> => {
  const given = (["contentMarkdown", "contentText", "url"] as const).filter((field) => body[field] !== undefined)
  if (given.length !== 1) {
    return Effect.fail(
      new InvalidRequest({
        message:
          given.length === 0
            ? "Give exactly one of contentMarkdown, contentText or url."
            : `Give exactly one of contentMarkdown, contentText or url, not ${given.join(" and ")}.`
      })
    )
  }
  const base = { name: body.name, parentPageId: body.parentPageId ?? null, createdVia }
  if (body.url !== undefined) return Effect.succeed({ ...base, content: { kind: "url", url: body.url.trim() } })
  const text = body.contentMarkdown ?? body.contentText ?? ""
  if (Buffer.byteLength(text) > maxInlineContentBytes) return Effect.fail(inlineTooLarge())
  if (text.trim().length === 0) return Effect.fail(new InvalidRequest({ message: `${given[0]}: the content is empty.` }))
  return Effect.succeed({ ...base, content: { kind: "inline", type: body.contentMarkdown !== undefined ? "md" : "txt", text } })
}

/** Who an upload is recorded against. */

/** An upload checked and hashed outside any transaction, ready to write. */
export interface PreparedUpload {
  readonly kb: { readonly id: string }
  readonly input: UploadInput
  readonly original: { readonly bytes: Uint8Array; readonly contentType: string; readonly type: DocumentType } | null
  readonly sha256: string | null
}

/** Wakes the ingestion worker when a job is queued (a no-op where no worker runs). */
export class IngestionSignal extends Effect.Service<IngestionSignal>()("svc/IngestionSignal", {
  effect: Effect.map(Queue.sliding<true>(1), (queue) => ({
    wake: Queue.offer(queue, true),
    wait: Queue.take(queue)
  }))
}) {}

/** Source operations for a calling principal. */
export class SourceService extends Effect.Service<SourceService>()("svc/SourceService", {
  effect: Effect.gen(function* () {
    const sources = yield* SourceRepo
    const pages = yield* PageRepo
    const feed = yield* ChangeRepo
    const knowledgebases = yield* KnowledgebaseRepo
    const inTransaction = transactionsOn(yield* SqlClient.SqlClient)
    const cursors = yield* Cursors
    const clock = yield* AppClock
    const config = yield* IngestionConfig
    const signal = yield* IngestionSignal
    const activity = yield* ActivityLog
    const now = () => isoAt(clock.now())

    const knowledgebase = (actor: Principal, id: string) => knowledgebases.found(actor.organization.id, id)
    const sourceNotFound = (id: string) => new NotFound({ message: `No source '${id}' in this Knowledgebase.` })
    const change = (knowledgebaseId: string, id: string, kind: string, at: string): Change => ({
      knowledgebaseId,
      type: "source",
      id,
      change: kind,
      changedAt: at
    })

    /** Refuses a `url` that is not public http(s) (unless private URLs are allowed), before anything is written. */
    const checkAddress = (raw: string) =>
      Effect.gen(function* () {
        const checked = checkUrl(raw, config.allowPrivateUrls, config.isPublic)
        if (!checked.ok) return yield* new InvalidRequest({ message: `url: ${checked.message}` })
        if (config.allowPrivateUrls || /^[\d.]+$|^\[/.test(checked.url.hostname)) return
        const addresses = yield* Effect.promise(() =>
          lookup(checked.url.hostname, { all: true }).catch(() => [] as Array<{ address: string }>)
        ).pipe(Effect.timeoutTo({ duration: "3 seconds", onTimeout: () => [] as Array<{ address: string }>, onSuccess: (a) => a }))
        const blocked = addresses.find((entry) => !config.isPublic(entry.address))
        if (blocked) {
          return yield* new InvalidRequest({
            message: `url: ${checked.url.hostname} resolves to ${blocked.address}, which is not a public address; only public addresses are fetched.`
          })
        }
      })

    /** Files a source in `knowledgebaseId` under `parentPageId` (null unfiles it there), recording the moves. */
    const fileIn = (row: SourceRow, knowledgebaseId: string, parentPageId: string | null, at: string) =>
      Effect.gen(function* () {
        if (parentPageId === null) {
          if (row.filed_knowledgebase_id !== knowledgebaseId) return row
          yield* sources.file(row.id, { knowledgebaseId: null, parentPageId: null, at })
          yield* feed.record(row.organization_id, change(knowledgebaseId, row.id, "moved", at))
          return { ...row, filed_knowledgebase_id: null, parent_page_id: null, updated_at: at }
        }
        yield* sources.file(row.id, { knowledgebaseId, parentPageId, at })
        yield* feed.record(row.organization_id, change(knowledgebaseId, row.id, "moved", at))
        const previous = row.filed_knowledgebase_id
        if (previous !== null && previous !== knowledgebaseId) {
          yield* feed.record(row.organization_id, change(previous, row.id, "moved", at))
        }
        return { ...row, filed_knowledgebase_id: knowledgebaseId, parent_page_id: parentPageId, updated_at: at }
      })

    const withinCap = (actor: Principal, knowledgebaseId: string) =>
      Effect.gen(function* () {
        const cap = planCaps[actor.organization.plan].sourcesPerKnowledgebase
        if ((yield* sources.countAttached(knowledgebaseId)) >= cap) {
          return yield* new PlanLimit({
            message: `The ${actor.organization.plan} plan allows ${cap} sources per Knowledgebase; this Knowledgebase has reached it.`
          })
        }
      })

    /** Fails a processing source whose job is lost or past its deadline; answers the row as it is now. */
    const refresh = (row: SourceRow) =>
      Effect.gen(function* () {
        if (row.status !== "processing") return row
        const job = yield* sources.job(row.id)
        const at = clock.now()
        const stuck = job === null || (job.state === "running" && job.deadline_at !== null && Date.parse(job.deadline_at) < at)
        if (!stuck) return row
        const message =
          job === null
            ? "Indexing was lost before it finished; upload the document again."
            : `Indexing did not finish within ${seconds(config.jobTimeoutMs)} and was stopped.`
        return yield* failSource(row.id, message)
      })

    /** Marks a processing source failed (inside its own transaction), recording it in the feed. */
    const failSource = (sourceId: string, message: string) =>
      inTransaction(
        Effect.gen(function* () {
          const current = yield* sources.byIdUnscoped(sourceId)
          if (!current) return yield* Effect.dieMessage(`source ${sourceId} vanished while failing it`)
          if (current.status !== "processing") return current
          const at = now()
          yield* sources.setStatus(sourceId, { status: "failed", errorMessage: message, at })
          yield* sources.finishJob(sourceId)
          for (const knowledgebaseId of yield* sources.attachments(sourceId)) {
            yield* feed.record(current.organization_id, change(knowledgebaseId, sourceId, "failed", at))
          }
          return { ...current, status: "failed" as const, error_message: message, updated_at: at }
        })
      )
    /**
     * Answers an upload of bytes the organization already holds as `existing`: attaches it to the
     * Knowledgebase (under the plan cap) unless it is there, files it when asked, and says
     * `deduplicated: true` with its current status. Runs inside the upload's transaction.
     */
    const attachExisting = (actor: Principal, knowledgebaseId: string, existing: SourceRow, parentPageId: string | null, at: string) =>
      Effect.gen(function* () {
        const attached = (yield* sources.attachments(existing.id)).includes(knowledgebaseId)
        if (!attached) {
          yield* withinCap(actor, knowledgebaseId)
          yield* sources.attach(knowledgebaseId, existing.id, at)
          yield* sources.rescopePassages(existing.id, passageScope(actor.organization.id, yield* sources.attachments(existing.id)))
          yield* sources.touchKnowledgebase(knowledgebaseId, 1, at)
          yield* feed.record(actor.organization.id, change(knowledgebaseId, existing.id, "created", at))
        }
        const filed = parentPageId === null ? existing : yield* fileIn(existing, knowledgebaseId, parentPageId, at)
        return { status: existing.status, source: toSource(filed, knowledgebaseId), reviewPath: null, deduplicated: true } satisfies SourceWrite
      })
    const pendingReview = (organizationId: string, sourceId: string) =>
      Effect.gen(function* () {
        const row = yield* sources.byIdForUpdate(organizationId, sourceId)
        if (!row) return yield* new NotFound({ message: `No review item '${sourceId}' in this organization.` })
        if (row.status !== "pending_review") {
          return yield* new InvalidRequest({ message: `Review item '${sourceId}' is no longer waiting (the source is ${row.status}).` })
        }
        return row
      })

    return {
      /** The upload a JSON body describes (shared with MCP). */
      fromJson: uploadFromJson,

      /**
       * The first step of an upload, outside any transaction: checks the Knowledgebase and a `url`'s
       * address (DNS), and hashes the original. Nothing is written.
       */
      prepare: (actor: Principal, knowledgebaseId: string, input: UploadInput) =>
        Effect.gen(function* () {
          const kb = yield* knowledgebase(actor, knowledgebaseId)
          if (input.content.kind === "url") yield* checkAddress(input.content.url)
          const original =
            input.content.kind === "inline"
              ? { bytes: new Uint8Array(Buffer.from(input.content.text)), contentType: input.content.type === "md" ? "text/markdown" : "text/plain", type: input.content.type }
              : input.content.kind === "file"
                ? { bytes: input.content.bytes, contentType: input.content.contentType, type: input.content.type }
                : null
          const sha256 = original ? createHash("sha256").update(original.bytes).digest("hex") : null
          return { kb, input, original, sha256 } satisfies PreparedUpload
        }),

      /**
       * The second step, database work only, in one transaction (a savepoint inside a caller's):
       * answers `processing` (indexing queued; call `wakeWorker` once committed) or `pending_review`
       * (the organization reviews agent writes). Nothing is written when anything is refused.
       */
      write: (actor: Principal, { kb, input, original, sha256 }: PreparedUpload) =>
        Effect.gen(function* () {
          const reviewed = actor.organization.gates.has("review")
          return yield* inTransaction(
            Effect.gen(function* () {
              if (input.parentPageId !== null && !(yield* pages.findForUpdate(kb.id, input.parentPageId))) {
                return yield* new NotFound({ message: `parentPageId: no page or folder '${input.parentPageId}' in this Knowledgebase.` })
              }
              const at = now()
              const existing = reviewed || sha256 === null ? null : yield* sources.byContent(actor.organization.id, sha256)
              if (existing) return yield* attachExisting(actor, kb.id, existing, input.parentPageId, at)
              yield* withinCap(actor, kb.id)
              const row: SourceRow = {
                id: newId(),
                organization_id: actor.organization.id,
                knowledgebase_id: kb.id,
                name: input.name,
                type: original?.type ?? "url",
                status: reviewed ? "pending_review" : "processing",
                disabled: 0,
                url: input.content.kind === "url" ? input.content.url : null,
                size_bytes: original?.bytes.byteLength ?? 0,
                content_sha256: sha256,
                canonical_sha256: reviewed ? null : sha256,
                error_message: null,
                created_via: input.createdVia,
                filed_knowledgebase_id: input.parentPageId === null ? null : kb.id,
                parent_page_id: input.parentPageId,
                author: authorOf(actor),
                created_at: at,
                updated_at: at
              }
              if (row.canonical_sha256 === null) yield* sources.insert(row)
              else {
                // Another upload of the same bytes committed first (on another connection or instance): attach that one.
                const claim = yield* sources.insertOrExisting({ ...row, canonical_sha256: row.canonical_sha256 })
                if (!claim.inserted) return yield* attachExisting(actor, kb.id, claim.row, input.parentPageId, at)
              }
              if (original) yield* sources.keepOriginal(row.id, original.contentType, original.bytes)
              yield* sources.attach(kb.id, row.id, at)
              yield* sources.touchKnowledgebase(kb.id, 1, at)
              if (!reviewed) yield* sources.enqueue(row.id, at)
              yield* feed.record(actor.organization.id, change(kb.id, row.id, "created", at))
              return {
                status: row.status,
                source: toSource(row, kb.id),
                reviewPath: reviewed ? reviewPathOf(kb.id, row.id) : null,
                deduplicated: false
              } satisfies SourceWrite
            })
          )
        }),

      /** Tells the ingestion worker that a job may be waiting; call after an upload committed. */
      wakeWorker: signal.wake,

      /** One page of the Knowledgebase's sources, oldest attachment first. */
      list: (
        actor: Principal,
        knowledgebaseId: string,
        params: { readonly limit?: number | undefined; readonly cursor?: string | undefined; readonly updatedSince?: string | undefined }
      ) =>
        Effect.gen(function* () {
          const kb = yield* knowledgebase(actor, knowledgebaseId)
          const list = `sources:${actor.organization.id}:${kb.id}:${params.updatedSince ?? ""}`
          const request = yield* cursors.request(list, params)
          const rows = yield* sources.list(kb.id, request, params.updatedSince ?? null)
          const page = cursors.page(list, request, rows, (row) => [row.attached_at, row.id])
          return { items: page.items.map((row) => toSource(row, kb.id)), nextCursor: page.nextCursor }
        }),

      /** One source; reading a processing source checks its job and refreshes its status. */
      get: (actor: Principal, knowledgebaseId: string, sourceId: string) =>
        Effect.gen(function* () {
          const kb = yield* knowledgebase(actor, knowledgebaseId)
          const row = yield* sources.find(kb.id, sourceId)
          if (!row) return yield* sourceNotFound(sourceId)
          const current = yield* refresh(row)
          yield* activity.record(actor, {
            action: "read_source",
            knowledgebaseId: kb.id,
            results: [{ kind: "source", id: current.id, title: current.name }]
          })
          return toSource(current, kb.id)
        }),

      /** Files a source under a folder or page of this Knowledgebase, or unfiles it here (null). */
      move: (actor: Principal, knowledgebaseId: string, sourceId: string, parentPageId: string | null) =>
        Effect.gen(function* () {
          const kb = yield* knowledgebase(actor, knowledgebaseId)
          return yield* inTransaction(
            Effect.gen(function* () {
              const row = yield* sources.findForUpdate(kb.id, sourceId)
              if (!row) return yield* sourceNotFound(sourceId)
              if (parentPageId !== null && !(yield* pages.findForUpdate(kb.id, parentPageId))) {
                return yield* new NotFound({ message: `parentPageId: no page or folder '${parentPageId}' in this Knowledgebase.` })
              }
              const at = now()
              const filed = yield* fileIn(row, kb.id, parentPageId, at)
              if (filed !== row) yield* sources.touchKnowledgebase(kb.id, 0, at)
              return toSource(filed, kb.id)
            })
          )
        }),

      /** Uploads of an organization waiting for review, oldest first. */
      pendingReviews: (organizationId: string) =>
        Effect.map(sources.pending(organizationId), (rows) =>
            rows.map((row) => ({
              id: row.id,
              kind: "source_upload" as const,
              knowledgebaseId: row.knowledgebase_id,
              sourceId: row.id,
              title: row.name,
              author: row.author,
              createdAt: row.created_at
            }))
        ),

      /** Approves an upload waiting for review: it starts indexing. */
      approve: (organizationId: string, sourceId: string) =>
        Effect.gen(function* () {
          const approved = yield* inTransaction(
            Effect.gen(function* () {
              const row = yield* pendingReview(organizationId, sourceId)
              const at = now()
              yield* sources.setStatus(row.id, { status: "processing", errorMessage: null, at })
              yield* sources.enqueue(row.id, at)
              yield* feed.record(organizationId, change(row.knowledgebase_id, row.id, "updated", at))
              return toSource({ ...row, status: "processing", updated_at: at }, row.knowledgebase_id)
            })
          )
          yield* signal.wake
          return { id: sourceId, status: "processing" as const, source: approved }
        }),

      /** Rejects an upload waiting for review: the source is deleted. */
      reject: (organizationId: string, sourceId: string) =>
        inTransaction(
          Effect.gen(function* () {
            const row = yield* pendingReview(organizationId, sourceId)
            const at = now()
            for (const knowledgebaseId of yield* sources.attachments(row.id)) {
              yield* sources.touchKnowledgebase(knowledgebaseId, -1, at)
              yield* feed.record(organizationId, change(knowledgebaseId, row.id, "deleted", at))
            }
            yield* sources.remove(row.id)
            return { id: sourceId, status: "deleted" as const }
          })
        ),

      /** Fails a processing source (the worker's verdict, or a stuck job). */
      fail: failSource
    }
  }),
  dependencies: [SourceRepo.Default, PageRepo.Default, ChangeRepo.Default, KnowledgebaseRepo.Default, Cursors.Default, ActivityLog.Default, IngestionSignal.Default]
}) {}
