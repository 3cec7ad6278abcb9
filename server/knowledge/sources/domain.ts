/** Sources (documents): upload bodies, answers and list fields of the contract. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Source } from "../knowledgebases/domain.js"
import { Uuid } from "../../platform/schema.js"

/** Inline content (`contentMarkdown`, `contentText`) is limited to 1 MB. */
export const maxInlineContentBytes = 1_000_000


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
