/** Pages and folders of a Knowledgebase: the resource and body schemas of the contract. */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"
import { Links } from "./links.js"
import { PatchOperations } from "./patch.js"

/** The template key that marks a folder. */
export const folderTemplate = "folder"
/** The template key of an ordinary page. */
export const defaultTemplate = "page"

const strict = { onExcessProperty: "error", errors: "all" } as const

/** A page or folder as write answers and lists name it. */
export const PageSummary = Schema.Struct({
  id: Uuid,
  knowledgebaseId: Uuid,
  title: Schema.String,
  templateKey: Schema.String,
  parentPageId: Schema.NullOr(Uuid),
  createdAt: DateTime,
  updatedAt: DateTime,
  description: Schema.String,
  isFolder: Schema.Boolean
}).annotations({ identifier: "PageSummary" })
export type PageSummary = typeof PageSummary.Type

const TitledRef = Schema.Struct({ id: Uuid, title: Schema.String })

/** A page read in full. */
export const Page = Schema.Struct({
  ...PageSummary.fields,
  markdown: Schema.String,
  attachedFiles: Schema.Array(Schema.String),
  relatedPages: Schema.Array(TitledRef),
  referencedBy: Schema.Array(TitledRef),
  children: Schema.Array(
    Schema.Struct({
      id: Uuid,
      title: Schema.String,
      description: Schema.String,
      isFolder: Schema.Boolean,
      childCount: Schema.Int
    })
  )
}).annotations({ identifier: "Page" })
export type Page = typeof Page.Type

const Title = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({
  message: () => "title must be 1 to 200 characters",
  jsonSchema: { type: "string", minLength: 1, maxLength: 200 }
})
const Description = Schema.String.pipe(Schema.maxLength(2_000)).annotations({
  message: () => "description must be at most 2000 characters"
})

/** Body of `POST /knowledgebases/{id}/pages`. */
export const CreatePage = Schema.Struct({
  title: Title,
  templateKey: Schema.optional(
    Schema.String.pipe(Schema.pattern(/^[a-z][a-z0-9_]{0,63}$/)).annotations({
      description: "`folder` creates a folder; default `page`.",
      message: () => "templateKey must be 1 to 64 lowercase letters, digits or underscores"
    })
  ),
  bodyMarkdown: Schema.optional(Schema.String.annotations({ description: "The page body (under 256 KB); not for folders." })),
  description: Schema.optional(Description),
  parentPageId: Schema.optional(Schema.NullOr(Uuid))
}).annotations({
  identifier: "CreatePage",
  parseOptions: strict,
  examples: [{ title: "Refund policy", bodyMarkdown: "# Refunds\n\nWithin 30 days.", parentPageId: null }]
})
export type CreatePage = typeof CreatePage.Type

/** Body of `PATCH /knowledgebases/{id}/pages/{pageId}`: `patch` and/or `description`. */
export const PatchPage = Schema.Struct({
  patch: Schema.optional(PatchOperations),
  description: Schema.optional(Description)
}).annotations({
  identifier: "PatchPage",
  parseOptions: strict,
  examples: [{ patch: [{ op: "replace", oldString: "30 days", newString: "45 days" }] }]
})
export type PatchPage = typeof PatchPage.Type

/** Body of `POST .../pages/{pageId}/append`. */
export const AppendPage = Schema.Struct({
  text: Schema.String.pipe(Schema.minLength(1)).annotations({ message: () => "text must not be empty" })
}).annotations({ identifier: "AppendPage", parseOptions: strict, examples: [{ text: "\n\n## Exceptions\n" }] })

/** Body of `POST .../pages/{pageId}/move`. */
export const MovePage = Schema.Struct({
  parentPageId: Schema.NullOr(Uuid).annotations({ description: "A folder or page of the same Knowledgebase, or null for the top level." })
}).annotations({ identifier: "MovePage", parseOptions: strict, examples: [{ parentPageId: null }] })

/** The answer of a page write (create, edit, append). */
export const PageWrite = Schema.Struct({
  status: Schema.Literal("applied", "pending_review"),
  page: PageSummary,
  revisionId: Uuid,
  reviewPath: Schema.NullOr(Schema.String),
  links: Links
}).annotations({ identifier: "PageWrite" })
export type PageWrite = typeof PageWrite.Type

/** One version in a page's revision history. */
export const PageRevision = Schema.Struct({
  id: Uuid,
  number: Schema.NullOr(Schema.Int),
  kind: Schema.Literal("create", "edit", "append"),
  status: Schema.Literal("applied", "pending_review", "rejected"),
  title: Schema.String,
  description: Schema.String,
  markdown: Schema.String,
  author: Schema.NullOr(Schema.String),
  createdAt: DateTime,
  reviewedAt: Schema.NullOr(DateTime)
}).annotations({ identifier: "PageRevision" })
export type PageRevision = typeof PageRevision.Type

/** Fields a revision list may be narrowed to. */
export const revisionFields = ["id", "number", "kind", "status", "title", "description", "markdown", "author", "createdAt", "reviewedAt"] as const

/** Fields a page index listing may be narrowed to. */
export const pageIndexFields = [
  "id",
  "title",
  "description",
  "templateKey",
  "isFolder",
  "parentPageId",
  "path",
  "depth",
  "childCount",
  "pageCount",
  "collapsed",
  "updatedAt",
  "hook"
] as const
