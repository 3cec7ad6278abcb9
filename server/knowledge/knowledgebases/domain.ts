/** Knowledgebases, their page index and their sources: the resource schemas of the contract. */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"


/** How many sources and pages a Knowledgebase holds. */
export const KnowledgebaseCounts = Schema.Struct({
  sources: Schema.Int,
  pages: Schema.Int
})

/** A Knowledgebase as listed. */
export const Knowledgebase = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  description: Schema.String,
  createdAt: DateTime,
  updatedAt: DateTime,
  counts: KnowledgebaseCounts
}).annotations({
  identifier: "Knowledgebase",
  examples: [
    {
      id: "3f0a3a5e-8d4b-4b8e-9c59-2a8e0f7d1c11",
      name: "Support handbook",
      description: "How we answer customers.",
      createdAt: "2026-11-21T10:00:00.000Z",
      updatedAt: "2026-11-21T10:00:00.000Z",
      counts: { sources: 0, pages: 0 }
    }
  ]
})
export type Knowledgebase = typeof Knowledgebase.Type

/** Fields a Knowledgebase list may be narrowed to. */
export const knowledgebaseFields = ["id", "name", "description", "createdAt", "updatedAt", "counts"] as const

/** A Source (document) of a Knowledgebase. */
export const Source = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  type: Schema.String,
  status: Schema.Literal("processing", "ready", "failed", "pending_review"),
  searchable: Schema.Boolean,
  disabled: Schema.Boolean,
  url: Schema.NullOr(Schema.String),
  updatedAt: DateTime,
  createdAt: DateTime,
  sizeBytes: Schema.Int,
  errorMessage: Schema.NullOr(Schema.String),
  createdVia: Schema.String,
  parentPageId: Schema.NullOr(Uuid)
}).annotations({ identifier: "Source" })
export type Source = typeof Source.Type

/** An item of a Knowledgebase's page index. */
export const PageIndexItem = Schema.Struct({
  id: Uuid,
  title: Schema.String,
  description: Schema.String,
  templateKey: Schema.String,
  parentPageId: Schema.NullOr(Uuid),
  updatedAt: DateTime,
  hook: Schema.String,
  isFolder: Schema.Boolean,
  path: Schema.Array(Schema.String),
  depth: Schema.Int,
  childCount: Schema.Int,
  pageCount: Schema.Int,
  collapsed: Schema.Boolean
}).annotations({ identifier: "PageIndexItem" })
export type PageIndexItem = typeof PageIndexItem.Type

/** A Knowledgebase with its sources and page index (the detail read). */
export const KnowledgebaseDetail = Schema.Struct({
  ...Knowledgebase.fields,
  sources: Schema.Array(Source),
  pages: Schema.Array(PageIndexItem)
}).annotations({ identifier: "KnowledgebaseDetail" })
export type KnowledgebaseDetail = typeof KnowledgebaseDetail.Type

/** Body of `POST /knowledgebases`. */
export const CreateKnowledgebase = Schema.Struct({
  name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({
    message: () => "name must be 1 to 200 characters",
    jsonSchema: { type: "string", minLength: 1, maxLength: 200, description: "1 to 200 characters (trimmed)." }
  }),
  description: Schema.optional(
    Schema.String.pipe(Schema.maxLength(2_000)).annotations({ message: () => "description must be at most 2000 characters" })
  )
}).annotations({
  identifier: "CreateKnowledgebase",
  parseOptions: { onExcessProperty: "error", errors: "all" },
  examples: [{ name: "Support handbook", description: "How we answer customers." }]
})
export type CreateKnowledgebase = typeof CreateKnowledgebase.Type

/** Where a review item is read, relative to `{base_url}`: the `reviewPath` of a write's answer. */
export const reviewPathOf = (knowledgebaseId: string, reviewId: string): string => `/knowledgebases/${knowledgebaseId}/reviews/${reviewId}`
