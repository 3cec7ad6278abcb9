/** Knowledgebases: create within the plan cap, list, read. Knows nothing of HTTP. */
import { Effect, Stream } from "effect"
import { planCaps, type Principal } from "../identity/domain.js"
import { AppClock, isoAt } from "../platform/clock.js"
import { ExportTooLarge, NotFound, PlanLimit } from "../platform/errors.js"
import { exportRate, RateLimiter } from "../platform/rate-limiter.js"
import { estimateExportBytes, exportArchiveStream, isExportTooLarge, safeName } from "./export/archive.js"
import { newId } from "../platform/ids.js"
import { Cursors, type Page } from "../platform/pagination.js"
import { CacheVersions } from "../platform/sql/cache-versions.js"
import { dataVersionCache } from "../platform/sql/data-version-cache.js"
import { ReadConnection } from "../platform/sql/read-connection.js"
import { WriteTransactions } from "../platform/sql/write-fast-path.js"
import type { CreateKnowledgebase, Knowledgebase, KnowledgebaseDetail } from "./knowledgebases/domain.js"
import { PageRepo } from "./pages/repo.js"
import { ActivityLog } from "./activity/service.js"
import { MemoryService } from "./memories/service.js"
import { createKnowledgebaseTx, KnowledgebaseRepo } from "./knowledgebases/repo.js"
import { SourceRepo, toSource } from "./sources/repo.js"
import { buildIndex } from "./pages/tree.js"

const listPagesKept = 256

/** Knowledgebase operations for a calling principal. */
export class KnowledgebaseService extends Effect.Service<KnowledgebaseService>()("svc/KnowledgebaseService", {
  effect: Effect.gen(function* () {
    const repo = yield* KnowledgebaseRepo
    const pages = yield* PageRepo
    const sources = yield* SourceRepo
    const activity = yield* ActivityLog
    const memoryService = yield* MemoryService
    const limiter = yield* RateLimiter
    const cursors = yield* Cursors
    const clock = yield* AppClock
    const writes = yield* WriteTransactions
    const listPages = dataVersionCache<string, Page<Knowledgebase>>((yield* CacheVersions).of(["knowledgebases"]), listPagesKept)

    const notFound = (id: string) => new NotFound({ message: `No Knowledgebase '${id}' in this organization.` })

    return {
      /** Creates a Knowledgebase unless the organization's plan cap is reached. */
      create: (actor: Principal, input: CreateKnowledgebase) =>
        Effect.suspend(() => {
          const org = actor.organization
          const cap = planCaps[org.plan].knowledgebases
          const at = isoAt(clock.now())
          const kb: Knowledgebase = {
            id: newId(),
            name: input.name,
            description: input.description ?? "",
            createdAt: at,
            updatedAt: at,
            counts: { sources: 0, pages: 0 }
          }
          return Effect.flatMap(writes.run(() => createKnowledgebaseTx(org.id, actor.key.id, kb, cap)), (outcome) =>
            outcome === "capReached"
              ? Effect.fail(new PlanLimit({ message: `The ${org.plan} plan allows ${cap} Knowledgebases; this organization has reached it.` }))
              : Effect.succeed(kb)
          )
        }),

      /**
       * One page of the organization's Knowledgebases, oldest first. Pages are kept while nothing
       * wrote Knowledgebases since (`CacheVersions`), so a client polling its list costs no query.
       */
      list: (actor: Principal, params: { readonly limit?: number | undefined; readonly cursor?: string | undefined }) =>
        listPages.get(
          `${actor.organization.id}\n${params.limit ?? ""}\n${params.cursor ?? ""}`,
          Effect.gen(function* () {
            const list = `knowledgebases:${actor.organization.id}`
            const request = yield* cursors.request(list, params)
            const rows = yield* repo.list(actor.organization.id, request)
            return cursors.page(list, request, rows, (kb) => [kb.createdAt, kb.id]) satisfies Page<Knowledgebase>
          })
        ),

      /**
       * An export of a Knowledgebase as a zip stream: refused with `export_too_large` before a
       * byte is sent when its content is over 50 MB; page bodies are read one at a time, as an
       * Effect stream run by whoever runs the archive's stream (the response), only as fast as the
       * archive is written. Counts against the key's 3 exports per minute.
       */
      export: (actor: Principal, id: string) =>
        Effect.gen(function* () {
          const kb = yield* repo.byId(actor.organization.id, id)
          if (!kb) return yield* notFound(id)
          yield* limiter.take(exportRate, actor.key.id)
          const index = buildIndex(yield* pages.treeRows(kb.id), { parent: { kind: "all" } }).items
          const facts = yield* pages.exportFacts(kb.id)
          const knowledgebase = { id: kb.id, name: kb.name, description: kb.description, exportedAt: isoAt(clock.now()) }
          const exported = index.map((item) => ({
            id: item.id,
            title: item.title,
            templateKey: item.templateKey,
            isFolder: item.isFolder,
            parentPageId: item.parentPageId,
            path: item.path,
            createdAt: facts.get(item.id)?.created_at ?? item.updatedAt,
            updatedAt: item.updatedAt,
            author: facts.get(item.id)?.author ?? null
          }))
          const memories = actor.key.kind === "personal" && actor.member !== null ? yield* memoryService.of(actor.member.id) : undefined
          const exportedSources = (yield* sources.all(kb.id)).map((row) => toSource(row, kb.id))
          const size = estimateExportBytes({
            knowledgebase,
            pages: exported.map((page) => ({ ...page, markdownBytes: facts.get(page.id)?.markdown_bytes ?? 0 })),
            sources: exportedSources,
            memories
          })
          if (isExportTooLarge(size)) {
            return yield* new ExportTooLarge({
              message: `This Knowledgebase holds about ${Math.ceil(size / 1_000_000)} MB; exports are limited to 50 MB.`
            })
          }
          const withBodies = Stream.mapEffect(Stream.fromIterable(exported), (page) =>
            page.isFolder
              ? Effect.succeed({ ...page, markdown: "" })
              : Effect.map(pages.markdownOf(page.id), (markdown) => ({ ...page, markdown }))
          )
          return {
            filename: `${safeName(kb.name)}.zip`,
            stream: exportArchiveStream({ knowledgebase, pages: withBodies, sources: exportedSources, memories })
          }
        }),

      /** A Knowledgebase with its sources and page index. */
      get: (actor: Principal, id: string) =>
        Effect.gen(function* () {
          const kb = yield* repo.byId(actor.organization.id, id)
          if (!kb) return yield* notFound(id)
          const pageIndex = buildIndex(yield* pages.treeRows(kb.id), { parent: { kind: "all" } }).items
          const attached = (yield* sources.all(kb.id)).map((row) => toSource(row, kb.id))
          yield* activity.record(actor, { action: "read_knowledgebase", knowledgebaseId: kb.id, results: [{ kind: "knowledgebase", id: kb.id, title: kb.name }] })
          return { ...kb, sources: attached, pages: pageIndex } satisfies KnowledgebaseDetail
        })
    }
  }),
  dependencies: [KnowledgebaseRepo.Default, PageRepo.Default, SourceRepo.Default, ActivityLog.Default, MemoryService.Default, Cursors.Default, RateLimiter.Default, ReadConnection.Default, CacheVersions.Default, WriteTransactions.Default]
}) {}
