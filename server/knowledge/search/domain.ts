/** Search across a Knowledgebase's documents, pages and memories: the request and answer of the contract. */
import { Schema } from "effect"
import { Uuid } from "../../platform/schema.js"

/** Search kinds. */
export const SearchKind = Schema.Literal("documents", "pages", "memories")
export type SearchKind = typeof SearchKind.Type

/** Body of `POST /knowledgebases/{id}/search`. */
export const SearchRequest = Schema.Struct({
  query: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(1_000)).annotations({
    message: () => "query must be 1 to 1000 characters",
    jsonSchema: { type: "string", minLength: 1, maxLength: 1000 }
  }),
  kinds: Schema.optional(
    Schema.Array(SearchKind).pipe(Schema.minItems(1)).annotations({
      description: "Default `[\"documents\", \"pages\"]`, plus `memories` for a personal key. `[\"pages\"]` is free."
    })
  ),
  collapse: Schema.optional(
    Schema.Boolean.annotations({
      description:
        "Default `true`: one hit per document, its best passage. `false` lists every matching passage, several per document."
    })
  ),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 200)).annotations({ message: () => "limit must be a whole number from 1 to 200" })),
  cursor: Schema.optional(Schema.String)
}).annotations({
  identifier: "SearchRequest",
  parseOptions: { onExcessProperty: "error", errors: "all" },
  examples: [{ query: "refund window", kinds: ["documents", "pages"] }]
})
export type SearchRequest = typeof SearchRequest.Type

/** Where a hit comes from. */
export const Citation = Schema.Struct({
  kind: Schema.Literal("document", "page", "memory"),
  knowledgebaseId: Schema.NullOr(Uuid),
  sourceId: Schema.optional(Uuid),
  sourceName: Schema.optional(Schema.String),
  passageId: Schema.optional(Schema.String),
  section: Schema.optional(Schema.NullOr(Schema.String)),
  pageId: Schema.optional(Uuid),
  title: Schema.optional(Schema.String),
  memoryId: Schema.optional(Uuid)
}).annotations({
  identifier: "Citation",
  description: "A document hit names its source and passage (and section: a PDF page, CSV rows); a page hit its page; a memory hit its memory."
})
export type Citation = typeof Citation.Type

/** One search hit. */
export const SearchResult = Schema.Struct({
  kind: Schema.Literal("document", "page", "memory"),
  id: Schema.String,
  title: Schema.String,
  snippet: Schema.String,
  score: Schema.Number,
  citation: Citation
}).annotations({ identifier: "SearchResult" })
export type SearchResult = typeof SearchResult.Type

/** Answer of a search. */
export const SearchResponse = Schema.Struct({
  results: Schema.Array(SearchResult),
  nextCursor: Schema.NullOr(Schema.String),
  kinds: Schema.Array(SearchKind),
  creditsCharged: Schema.Int,
  retrieval: Schema.Literal("lexical", "hybrid").annotations({
    description:
      "`lexical`: ranked on the words alone (no embedding model configured). `hybrid`: the passages nearest the query's embedding joined by reciprocal rank fusion, scores then being fused ranks."
  })
}).annotations({ identifier: "SearchResponse" })
