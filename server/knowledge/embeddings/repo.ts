/**
 * SQL for passage vectors (every statement on `passage_vectors` lives here): passages still
 * without a vector of the configured model, storing vectors, and the nearest passages to a query
 * vector. On SQLite the nearest passages are ranked inside SQLite by `sqlite-vec`'s
 * `vec_distance_cosine` when the extension loads (`sqlite-vec.ts`); otherwise, and on PostgreSQL
 * (pgvector does not install from the npm registry), an exact scan in JavaScript over the
 * organization's vectors read from the read connection. Both are exact (no approximate index):
 * their cost grows with the organization's passages (figures in docs/decisions.md).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { transactionsOn } from "../../platform/sql/database.js"
import { DatabaseBackend } from "../../platform/sql/dialect.js"
import { ReadConnection } from "../../platform/sql/read-connection.js"
import { EmbeddingConfig, isHybrid } from "./config.js"
import { openVecConnection } from "./sqlite-vec.js"
import { dot, vectorBytes, vectorOf } from "./vector.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const passageVectorsWrites = declareWrites("passage_vectors")

/** A passage waiting for its vector, with the text it is embedded from. */
export interface PendingPassage {
  readonly id: number
  readonly sourceId: string
  readonly organizationId: string
  /** The passage's text as stored (the store checks it is unchanged). */
  readonly text: string
  /** What is embedded: the document's name, the passage's section and its text. */
  readonly input: string
}

/** A vector to store for a passage read by `pending`. */
export interface PassageVector {
  readonly passage: PendingPassage
  readonly vector: Float32Array
}

/** A passage near a query, by cosine similarity (1 is the same direction). */
export interface NearPassage {
  readonly passageId: number
  readonly similarity: number
}

/** How nearest passages are found on this database. */
export type ScanMethod = "sqlite-vec" | "exact-scan"

interface PendingRow {
  readonly id: number
  readonly source_id: string
  readonly organization_id: string
  readonly name: string
  readonly section: string | null
  readonly text: string
}

const pendingQuery = `SELECT p.id, p.source_id, s.organization_id, s.name, p.section, p.text
  FROM passages p JOIN sources s ON s.id = p.source_id
  LEFT JOIN passage_vectors v ON v.passage_id = p.id AND v.model = ?
  WHERE v.passage_id IS NULL ORDER BY p.id LIMIT ?`

/** The passages a search may return: the organization's, of ready and enabled sources, of one Knowledgebase when named. */
const searchable = (knowledgebase: boolean) =>
  `FROM passage_vectors v JOIN passages p ON p.id = v.passage_id JOIN sources s ON s.id = p.source_id
  WHERE v.organization_id = ? AND v.model = ? AND v.dimensions = ? AND s.organization_id = v.organization_id
    AND s.status = 'ready' AND s.disabled = 0${
      knowledgebase ? " AND EXISTS (SELECT 1 FROM knowledgebase_sources ks WHERE ks.knowledgebase_id = ? AND ks.source_id = p.source_id)" : ""
    }`

/** What is embedded for a passage: its document's name and section as a heading line, then its text. */
const inputOf = (row: PendingRow): string => `${[row.name, row.section].filter((part) => part !== null && part !== "").join(" — ")}\n\n${row.text}`

/** The `k` best of `scored` by similarity (ties by passage id), best first. */
const topK = (scored: Array<NearPassage>, k: number): Array<NearPassage> =>
  scored.sort((a, b) => b.similarity - a.similarity || a.passageId - b.passageId).slice(0, k)

/** Passage vectors on either backend. */
export class PassageVectorRepo extends Effect.Service<PassageVectorRepo>()("svc/PassageVectorRepo", {
  scoped: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection
    const backend = yield* DatabaseBackend
    const settings = yield* EmbeddingConfig
    const inTransaction = transactionsOn(sql)
    // The extension is loaded only when it is used: SQLite with an embedding model configured.
    const vec = backend.dialect === "sqlite" && isHybrid(settings) && settings.sqliteVec ? yield* openVecConnection(backend.filename) : null
    if (vec !== null && !vec.loaded) yield* Effect.logWarning(`sqlite-vec could not be loaded (${vec.reason}); vector search scans in JavaScript`)
    const vecDb = vec?.loaded ? vec.db : null
    const statements = new Map<string, import("better-sqlite3").Statement>()
    const prepared = (text: string) => {
      let statement = statements.get(text)
      if (statement === undefined) {
        statement = vecDb!.prepare(text)
        statements.set(text, statement)
      }
      return statement
    }

    /** The exact scan in JavaScript: every searchable vector of the organization, scored against `query`. */
    const scanInJs = (organizationId: string, knowledgebaseId: string | null, model: string, query: Float32Array, k: number) =>
      Effect.map(
        Effect.orDie(
          reader.values<[number, Uint8Array]>(
            `SELECT v.passage_id, v.vector ${searchable(knowledgebaseId !== null)}`,
            knowledgebaseId === null ? [organizationId, model, query.length] : [organizationId, model, query.length, knowledgebaseId]
          )
        ),
        (rows) => topK(rows.map(([passageId, bytes]) => ({ passageId: Number(passageId), similarity: dot(query, vectorOf(bytes)) })), k)
      )

    /** The same ranking inside SQLite with `sqlite-vec`. */
    const scanWithVec = (organizationId: string, knowledgebaseId: string | null, model: string, query: Float32Array, k: number) =>
      Effect.orDie(
        Effect.try(() => {
          const text = `SELECT v.passage_id AS id, vec_distance_cosine(v.vector, ?) AS distance ${searchable(knowledgebaseId !== null)}
            ORDER BY distance, v.passage_id LIMIT ?`
          const bytes = vectorBytes(query)
          const params = knowledgebaseId === null ? [bytes, organizationId, model, query.length, k] : [bytes, organizationId, model, query.length, knowledgebaseId, k]
          const rows = prepared(text).all(...params) as Array<{ id: number; distance: number }>
          return rows.map((row) => ({ passageId: row.id, similarity: 1 - row.distance }))
        })
      )

    return {
      /** How nearest passages are found here. */
      scanMethod: (vecDb === null ? "exact-scan" : "sqlite-vec") as ScanMethod,

      /** Up to `limit` passages without a vector of `model` (none, or another model's), oldest first. */
      pending: (model: string, limit: number) =>
        Effect.map(Effect.orDie(reader.all<PendingRow>(pendingQuery, [model, limit])), (rows) =>
          rows.map(
            (row): PendingPassage => ({
              id: Number(row.id),
              sourceId: row.source_id,
              organizationId: row.organization_id,
              text: row.text,
              input: inputOf(row)
            })
          )
        ),

      /**
       * Stores the vectors of `model` in one transaction (replacing another model's). A passage
       * deleted or rewritten since `pending` read it (its text or source changed) gets none: it is
       * either gone or pending again. Answers how many were stored.
       */
      store: (model: string, vectors: ReadonlyArray<PassageVector>) =>
        inTransaction(
          Effect.reduce(vectors, 0, (stored, { passage, vector }) =>
            Effect.map(
              Effect.orDie(
                sql`INSERT INTO passage_vectors (passage_id, organization_id, model, dimensions, vector)
                  SELECT id, ${passage.organizationId}, ${model}, ${vector.length}, ${new Uint8Array(vectorBytes(vector))}
                  FROM passages WHERE id = ${passage.id} AND source_id = ${passage.sourceId} AND text = ${passage.text}
                  ON CONFLICT (passage_id) DO UPDATE SET organization_id = excluded.organization_id, model = excluded.model,
                    dimensions = excluded.dimensions, vector = excluded.vector
                  RETURNING passage_id`.pipe(writing(passageVectorsWrites))
              ),
              (rows) => stored + rows.length
            )
          )
        ),

      /** The `k` searchable passages nearest to `query` (a unit vector of `model`), most similar first. */
      nearest: (organizationId: string, knowledgebaseId: string | null, model: string, query: Float32Array, k: number) =>
        k <= 0 ? Effect.succeed([] as Array<NearPassage>) : vecDb !== null ? scanWithVec(organizationId, knowledgebaseId, model, query, k) : scanInJs(organizationId, knowledgebaseId, model, query, k)
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
