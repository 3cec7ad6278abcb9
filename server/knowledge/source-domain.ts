/** Sources (documents): upload bodies, answers and list fields of the contract. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Source, Uuid } from "./domain.js"

/** Inline content (`contentMarkdown`, `contentText`) is limited to 1 MB. */
export const maxInlineContentBytes = 1_000_000

/** A multipart upload's whole body stays within the 4.5 MB request limit. */
export const maxUploadBytes = 4_500_000

/** Types a multipart `file` may have (a fetched `url` may also be HTML). */
export const uploadTypes = ["pdf", "csv", "txt", "md"] as const

const Name = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({
  message: () => "name must be 1 to 200 characters",
  jsonSchema: { type: "string", minLength: 1, maxLength: 200 }
})

/** JSON body of `POST /knowledgebases/{id}/sources`: a name and exactly one of the three contents. */
export const CreateSourceJson = Schema.Struct({
  name: Name,
  contentMarkdown: Schema.optional(Schema.String.annotations({ description: "Markdown, up to 1 MB." })),
  contentText: Schema.optional(Schema.String.annotations({ description: "Plain text, up to 1 MB." })),
  url: Schema.optional(
    Schema.String.annotations({ description: "A public http(s) address; the service checks and fetches it." })
  ),
  parentPageId: Schema.optional(Schema.NullOr(Schema.String).annotations({ description: "A folder or page of this Knowledgebase." }))
}).annotations({
  identifier: "CreateSource",
  parseOptions: { onExcessProperty: "error", errors: "all" },
  description: "Give `name` and exactly one of `contentMarkdown`, `contentText` or `url`.",
  examples: [{ name: "Returns policy", contentMarkdown: "# Returns\n\nWithin 30 days, with the receipt." }]
})
export type CreateSourceJson = typeof CreateSourceJson.Type

/** Multipart body of `POST /knowledgebases/{id}/sources` (documents the form; parsed by hand with explicit limits). */
export const CreateSourceUpload = HttpApiSchema.Multipart(
  Schema.Struct({
    file: Schema.Uint8ArrayFromSelf.annotations({
      description: "A PDF, CSV, TXT or MD file within the 4.5 MB request limit.",
      jsonSchema: { type: "string", format: "binary" }
    }),
    name: Schema.optional(Schema.String.annotations({ description: "Defaults to the file's name." })),
    parentPageId: Schema.optional(Schema.String.annotations({ description: "A folder or page of this Knowledgebase." }))
  }).annotations({ identifier: "UploadSource" })
)

/** Answer of an upload: 202 while it is indexed or waits for review. */
export const SourceWrite = Schema.Struct({
  status: Schema.Literal("processing", "pending_review", "ready", "failed"),
  source: Source,
  reviewPath: Schema.NullOr(Schema.String),
  deduplicated: Schema.Boolean.annotations({
    description:
      "True when the organization already held these bytes as a document: that document (with its own name, which the upload's `name` does not change) is attached here and answered instead of a new one."
  })
}).annotations({
  identifier: "SourceAccepted",
  description:
    "`processing` until indexed (poll the source), or `pending_review` with `reviewPath` when the organization reviews agent writes. An upload of bytes the organization already holds as a document attaches that document, answers its current status and says `deduplicated: true`."
})
export type SourceWrite = typeof SourceWrite.Type

/** Body of `POST /knowledgebases/{id}/sources/{sourceId}/move`. */
export const MoveSource = Schema.Struct({
  parentPageId: Schema.NullOr(Uuid).annotations({ description: "A folder or page of this Knowledgebase, or null to unfile." })
}).annotations({ identifier: "MoveSource", parseOptions: { onExcessProperty: "error", errors: "all" } })

/** Fields a source list may be narrowed to. */
export const sourceFields = [
  "id",
  "name",
  "type",
  "status",
  "searchable",
  "disabled",
  "url",
  "updatedAt",
  "createdAt",
  "sizeBytes",
  "errorMessage",
  "createdVia",
  "parentPageId"
] as const

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
  creditsCharged: Schema.Int
}).annotations({ identifier: "SearchResponse" })
