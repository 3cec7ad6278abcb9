/**
 * What the exact nearest-neighbour scan of hybrid search costs (`server/knowledge/embeddings/repo.ts`):
 * one organization's passages with random unit vectors, searched through `PassageVectorRepo.nearest`
 * (the joins to sources and the Knowledgebase filter included) with `sqlite-vec` and with the scan
 * in JavaScript, on a temp SQLite data directory, or on PostgreSQL with `--database postgres://…`
 * (the JavaScript scan only). Rows are written straight into the tables, in one transaction.
 *
 *   npm run build && node dist/bench/vector-scan.js [--passages 10000,100000] [--dimensions 384] [--queries 20] [--database URL]
 *
 * Prints the median and p95 milliseconds of a top-10 query per size and method.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { openAdmin } from "../server/admin.js"
import { EmbeddingConfig } from "../server/knowledge/embeddings/config.js"
import { PassageVectorRepo } from "../server/knowledge/embeddings/repo.js"
import { unitVector, vectorBytes } from "../server/knowledge/embeddings/vector.js"
import { AccountsService } from "../server/identity/service.js"

const { values } = parseArgs({
  options: {
    passages: { type: "string", default: "10000,100000" },
    dimensions: { type: "string", default: "384" },
    queries: { type: "string", default: "20" },
    database: { type: "string" }
  }
})
const sizes = values.passages.split(",").map(Number)
const dimensions = Number(values.dimensions)
const queries = Number(values.queries)
const model = "bench-embed"

const randomUnit = () => unitVector(Array.from({ length: dimensions }, () => Math.random() * 2 - 1))
const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

for (const size of sizes) {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-vectors-"))
  const admin = openAdmin({ dataDir, database: values.database })
  try {
    const slug = `bench-${randomUUID().slice(0, 8)}`
    const org = await admin.run(Effect.flatMap(AccountsService, (accounts) => accounts.createOrganization({ slug, plan: "pro" })))
    const kb = randomUUID()
    const sourceId = randomUUID()
    const at = new Date().toISOString()
    await admin.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO knowledgebases ${sql.insert({ id: kb, organization_id: org.id, name: "Bench", created_at: at, updated_at: at } as any)}`
            yield* sql`INSERT INTO sources ${sql.insert({
              id: sourceId, organization_id: org.id, knowledgebase_id: kb, name: "Bench", type: "txt", status: "ready", disabled: 0,
              size_bytes: 0, created_via: "api", created_at: at, updated_at: at
            })}`
            yield* sql`INSERT INTO knowledgebase_sources ${sql.insert({ knowledgebase_id: kb, source_id: sourceId, attached_at: at })}`
            for (let start = 0; start < size; start += 500) {
              const count = Math.min(500, size - start)
              const ids = yield* sql<{ id: number }>`INSERT INTO passages ${sql.insert(
                Array.from({ length: count }, (_, i) => ({ source_id: sourceId, seq: start + i, section: null, start_offset: 0, end_offset: 1, scope: "s", text: `passage ${start + i}` }))
              )} RETURNING id`
              yield* sql`INSERT INTO passage_vectors ${sql.insert(
                ids.map(({ id }) => ({ passage_id: id, organization_id: org.id, model, dimensions, vector: new Uint8Array(vectorBytes(randomUnit())) }))
              )}`
            }
          })
        )
      )
    )
    for (const sqliteVec of values.database === undefined ? [true, false] : [false]) {
      const times = await admin.run(
        Effect.flatMap(PassageVectorRepo, (repo) =>
          Effect.gen(function* () {
            yield* repo.nearest(org.id, kb, model, randomUnit(), 10)
            const times: Array<number> = []
            for (let i = 0; i < queries; i++) {
              const started = performance.now()
              const hits = yield* repo.nearest(org.id, i % 2 === 0 ? kb : null, model, randomUnit(), 10)
              times.push(performance.now() - started)
              if (hits.length !== 10) throw new Error(`expected 10 hits, got ${hits.length}`)
            }
            return { method: repo.scanMethod, times: times.sort((a, b) => a - b) }
          })
        ).pipe(
          Effect.provide(
            PassageVectorRepo.DefaultWithoutDependencies.pipe(
              Layer.provide(EmbeddingConfig.layer({ model, baseUrl: "http://127.0.0.1:9/v1", sqliteVec }))
            )
          )
        )
      )
      console.log(
        `${values.database === undefined ? "sqlite" : "pg"}  ${size} passages × ${dimensions} dims  ${times.method.padEnd(10)}  median ${percentile(times.times, 0.5).toFixed(1)} ms  p95 ${percentile(times.times, 0.95).toFixed(1)} ms`
      )
    }
  } finally {
    await admin.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}
