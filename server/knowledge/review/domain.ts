/** A review item (a page write or an upload waiting for a person) as the API reads it. */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"

/** How much of the proposed text a review item shows. */
export const reviewPreviewChars = 500

/** The first {@link reviewPreviewChars} characters of a text, with `…` when cut. */
export const previewOf = (text: string): string =>
  text.length <= reviewPreviewChars ? text : `${text.slice(0, reviewPreviewChars)}…`

/** What a review item would change once approved. */
export const ReviewProposal = Schema.Struct({
  title: Schema.String.annotations({ description: "The page's title, or the document's name." }),
  description: Schema.NullOr(Schema.String).annotations({ description: "The page's description as proposed; null for a document." }),
  preview: Schema.String.annotations({
    description: "The first 500 characters of the page's body as proposed, or of a text document (MD, TXT, CSV); empty for a PDF or a URL."
  }),
  sizeBytes: Schema.Int.annotations({ description: "Bytes of the proposed page body, or of the uploaded document (0 for a URL not yet fetched)." }),
  type: Schema.NullOr(Schema.String).annotations({ description: "The document's type (`pdf`, `md`, `url`, …); null for a page." }),
  url: Schema.NullOr(Schema.String).annotations({ description: "The address of a URL document; null otherwise." })
}).annotations({ identifier: "ReviewProposal" })

/** One review item. */
export const ReviewItem = Schema.Struct({
  id: Uuid,
  kind: Schema.Literal("page_create", "page_edit", "page_append", "source_upload"),
  status: Schema.Literal("pending_review", "applied", "rejected").annotations({
    description: "A page write stays readable once settled (`applied` or `rejected`); an upload is readable while it waits."
  }),
  knowledgebaseId: Uuid,
  pageId: Schema.NullOr(Uuid),
  sourceId: Schema.NullOr(Uuid),
  author: Schema.NullOr(Schema.String),
  createdAt: DateTime,
  reviewedAt: Schema.NullOr(DateTime),
  proposed: ReviewProposal
}).annotations({ identifier: "ReviewItem" })
export type ReviewItem = typeof ReviewItem.Type
