/** Apps as the builder keeps them: the resource schemas of the contract. */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"

/** The services a published App exposes. */
export const AppServices = Schema.Struct({
  conversation: Schema.Boolean,
  transaction: Schema.Boolean
})

/** A JSON Schema object (a Transaction Service contract); null when the service is off. */
const JsonSchemaObject = Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/** A published App as listed: its pinned version's contract. */
export const PublishedApp = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  description: Schema.String,
  services: AppServices,
  inputSchema: JsonSchemaObject,
  outputSchema: JsonSchemaObject
}).annotations({
  identifier: "PublishedApp",
  examples: [
    {
      id: "5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
      name: "Quote desk",
      description: "Answers pricing questions and prices orders.",
      services: { conversation: true, transaction: true },
      inputSchema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
      outputSchema: { type: "object", properties: { price: { type: "number" } } }
    }
  ]
})
export type PublishedApp = typeof PublishedApp.Type

/** An App as listed with `include=drafts`: every App, published or not. */
export const AppDraftItem = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  description: Schema.String,
  published: Schema.Boolean,
  updatedAt: DateTime
}).annotations({ identifier: "AppDraftItem" })
export type AppDraftItem = typeof AppDraftItem.Type

/** Fields the published listing may be narrowed to. */
export const publishedAppFields = ["id", "name", "description", "services", "inputSchema", "outputSchema"] as const
/** Fields the listing with drafts may be narrowed to. */
export const draftAppFields = ["id", "name", "description", "published", "updatedAt"] as const
