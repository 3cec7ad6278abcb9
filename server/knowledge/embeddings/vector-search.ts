/**
 * The vector half of hybrid search: whether search is hybrid (an embedding model is configured) and
 * the passages nearest to a query by the cosine similarity of their vectors. A query's vector is
 * kept for `queryCacheMs` (paging through results, or the same question asked again, embeds once).
 * Embedding a query gets one attempt and one retry within `queryTimeoutMs`; when it fails the
 * answer is no passage (search goes on lexically) and a warning is logged.
 */
import { Effect } from "effect"
import { AppClock } from "../../platform/clock.js"
import { makeEmbeddingClient } from "./client.js"
import { EmbeddingConfig, isHybrid } from "./config.js"
import { type NearPassage, PassageVectorRepo, type ScanMethod } from "./repo.js"

/** How search retrieves: words only, or words fused with vectors. */
export type RetrievalMode = "lexical" | "hybrid"

/** The most query vectors kept at once. */
const cachedQueries = 500

/** The vector half of hybrid search. */
export class VectorSearch extends Effect.Service<VectorSearch>()("svc/VectorSearch", {
  effect: Effect.gen(function* () {
    const settings = yield* EmbeddingConfig
    const repo = yield* PassageVectorRepo
    const clock = yield* AppClock
    const hybrid = isHybrid(settings) ? settings : null
    const client = hybrid === null ? null : makeEmbeddingClient(hybrid)
    const cache = new Map<string, { readonly vector: Float32Array; readonly until: number }>()

    /** The query's vector, from the cache or the endpoint; none when the endpoint failed. */
    const queryVector = (query: string) =>
      Effect.gen(function* () {
        const now = clock.now()
        const cached = cache.get(query)
        if (cached !== undefined && cached.until > now) return cached.vector
        const embedded = yield* Effect.either(
          client!.embed([query], { attempts: 2, timeoutMs: settings.queryTimeoutMs }).pipe(
            Effect.timeoutFail({ duration: settings.queryTimeoutMs, onTimeout: () => new Error(`no answer within ${settings.queryTimeoutMs} ms`) })
          )
        )
        if (embedded._tag === "Left") {
          yield* Effect.logWarning(`search stays lexical for this query: ${embedded.left.message}`)
          return null
        }
        const vector = embedded.right[0]!
        cache.delete(query)
        cache.set(query, { vector, until: now + settings.queryCacheMs })
        if (cache.size > cachedQueries) cache.delete(cache.keys().next().value!)
        return vector
      })

    return {
      /** `hybrid` when an embedding model is configured, else `lexical`. */
      mode: (hybrid === null ? "lexical" : "hybrid") as RetrievalMode,
      /** The embedding model, or null when search is lexical. */
      model: hybrid?.model ?? null,
      /** How nearest passages are found on this database (`sqlite-vec` or an exact scan in JavaScript). */
      scanMethod: repo.scanMethod as ScanMethod,
      /**
       * The `k` passages nearest to `query` among the organization's ready, enabled sources (of
       * `knowledgebaseId` when not null), most similar first. None when search is lexical, the query
       * is blank or its embedding failed. Never fails.
       */
      nearestPassages: (organizationId: string, knowledgebaseId: string | null, query: string, k: number): Effect.Effect<ReadonlyArray<NearPassage>> =>
        Effect.gen(function* () {
          const text = query.trim()
          if (hybrid === null || text === "" || k <= 0) return []
          const vector = yield* queryVector(text)
          if (vector === null || !vector.some((value) => value !== 0)) return []
          return yield* repo.nearest(organizationId, knowledgebaseId, hybrid.model, vector, Math.floor(k))
        })
    }
  }),
  dependencies: [PassageVectorRepo.Default]
}) {}
