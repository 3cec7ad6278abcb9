/** Apps as the builder keeps them: the resource schemas of the contract. */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"
import { Greeting, IdList, ItemDescription, ItemName, strictBody } from "../versions/domain.js"
import { ModelSource } from "../versions/model.js"

/** The services a published App exposes. */
export const AppServices = Schema.Struct({
  conversation: Schema.Boolean,
  transaction: Schema.Boolean
})

/** A JSON Schema object (a Transaction Service contract); null when the service is off. */
export const JsonSchemaObject = Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown }))

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

/** The Transaction Service of an App's draft. */
export const AppApi = Schema.Struct({
  transactionEnabled: Schema.Boolean.annotations({ description: "Off by default." }),
  inputSchema: JsonSchemaObject.annotations({ description: "JSON Schema (draft 2020-12) of a transaction's `input`." }),
  outputSchema: JsonSchemaObject.annotations({ description: "JSON Schema (draft 2020-12) a transaction's reply must match." })
}).annotations({ identifier: "AppApi" })
export type AppApi = typeof AppApi.Type

/** What an App's draft is made of, besides its name and description (kept as the draft's JSON). */
export interface AppDefinition {
  readonly greeting: string | null
  readonly agentIds: ReadonlyArray<string>
  readonly flowIds: ReadonlyArray<string>
  readonly api: AppApi
}

/** Body of `POST /apps` (the Transaction Service is set with `PATCH /apps/{id}/draft`). */
export const CreateApp = Schema.Struct({
  name: ItemName,
  description: Schema.optional(ItemDescription),
  greeting: Schema.optional(Greeting),
  agentIds: Schema.optional(IdList("Agent")),
  flowIds: Schema.optional(IdList("Flow"))
}).annotations({ identifier: "CreateApp", ...strictBody, examples: [{ name: "Quote desk", agentIds: ["9b2c7d3e-1f4a-4c5b-8e6d-7a8b9c0d1e2f"] }] })
export type CreateApp = typeof CreateApp.Type

/** Body of `PATCH /apps/{id}/draft`: at least one property; `api` changes only the properties it gives. */
export const PatchAppDraft = Schema.Struct({
  name: Schema.optional(ItemName),
  description: Schema.optional(ItemDescription),
  greeting: Schema.optional(Greeting),
  agentIds: Schema.optional(IdList("Agent")),
  flowIds: Schema.optional(IdList("Flow")),
  api: Schema.optional(
    Schema.Struct({
      transactionEnabled: Schema.optional(Schema.Boolean),
      inputSchema: Schema.optional(JsonSchemaObject),
      outputSchema: Schema.optional(JsonSchemaObject)
    }).annotations(strictBody)
  )
}).annotations({
  identifier: "PatchAppDraft",
  ...strictBody,
  examples: [
    {
      api: {
        transactionEnabled: true,
        inputSchema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
        outputSchema: { type: "object", properties: { price: { type: "number" } } }
      }
    }
  ]
})
export type PatchAppDraft = typeof PatchAppDraft.Type

/** The model the Supervisor runs on, as reads show it (an App names none: always the server's default). */
const supervisorModelFields = {
  model: Schema.String.annotations({
    description: "The model the Supervisor runs on: the server's default at the time of this read (an App names no model of its own; it is resolved at run time)."
  }),
  modelSource: ModelSource
}

/** An App's draft (`GET/PATCH /apps/{id}/draft`, `POST /apps`). */
export const AppDraft = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  description: Schema.String,
  greeting: Schema.NullOr(Schema.String),
  agentIds: Schema.Array(Uuid),
  flowIds: Schema.Array(Uuid),
  api: AppApi,
  ...supervisorModelFields,
  publishedVersion: Schema.NullOr(Schema.Int).annotations({ description: "The published version; null until the first publish." }),
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "AppDraft" })
export type AppDraft = typeof AppDraft.Type

/** A member Agent or Flow at the version an App's version pinned. */
export const PinnedMember = Schema.Struct({ id: Uuid, version: Schema.Int }).annotations({ identifier: "PinnedMember" })
export type PinnedMember = typeof PinnedMember.Type

/** A published App (`GET /apps/{id}`): its published version, with the member versions it pinned. */
export const App = Schema.Struct({
  ...PublishedApp.fields,
  greeting: Schema.NullOr(Schema.String),
  agents: Schema.Array(PinnedMember),
  flows: Schema.Array(PinnedMember),
  ...supervisorModelFields,
  version: Schema.Int,
  publishedAt: DateTime
}).annotations({ identifier: "App" })
export type App = typeof App.Type
