/** Schemas every versioned item (Agent, Flow, App) shares: body fields, the publish and delete answers. */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"

/** Refuses unknown properties, naming every problem. */
export const strictBody = { parseOptions: { onExcessProperty: "error", errors: "all" } } as const

/** An item's name: 1 to 200 characters, trimmed. */
export const ItemName = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({
  message: () => "name must be 1 to 200 characters",
  jsonSchema: { type: "string", minLength: 1, maxLength: 200, description: "1 to 200 characters (trimmed)." }
})

/** An item's description: at most 2,000 characters. */
export const ItemDescription = Schema.String.pipe(Schema.maxLength(2_000)).annotations({
  message: () => "description must be at most 2000 characters"
})

/** A greeting shown on the first turn of a conversation; null for none. */
export const Greeting = Schema.NullOr(
  Schema.String.pipe(Schema.maxLength(2_000)).annotations({ message: () => "greeting must be at most 2000 characters" })
)

/** A list of ids of other items (checked against the caller's organization when saved). */
export const IdList = (noun: string) =>
  Schema.Array(Schema.String.pipe(Schema.maxLength(100))).pipe(Schema.maxItems(50)).annotations({
    description: `Ids of ${noun}s of the organization (at most 50, each once).`,
    message: () => `at most 50 ${noun} ids`
  })

/** The answer of `POST …/{id}/publish`. */
export const PublishedVersion = Schema.Struct({
  id: Uuid,
  version: Schema.Int.annotations({ description: "1 for the first publish, then 2, 3, …; each version is immutable." }),
  publishedAt: DateTime
}).annotations({ identifier: "PublishedVersion" })
export type PublishedVersion = typeof PublishedVersion.Type

/** The answer of `DELETE …/{id}`. */
export const Deleted = Schema.Struct({ ok: Schema.Literal(true) }).annotations({ identifier: "Deleted" })

/** An item as listed with `include=drafts`: published or not. */
export const draftListItemFields = {
  id: Uuid,
  name: Schema.String,
  description: Schema.String,
  published: Schema.Boolean,
  updatedAt: DateTime
}

/** Fields the listing with drafts may be narrowed to. */
export const draftListFields = ["id", "name", "description", "published", "updatedAt"] as const

/** An error for a PATCH that changes nothing. */
export const emptyPatchMessage = "give at least one property to change"
