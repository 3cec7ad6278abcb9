/** Agents as the builder keeps them: the resource schemas of the contract. */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"
import { draftListItemFields, Greeting, IdList, ItemDescription, ItemName, strictBody } from "../versions/domain.js"
import { ModelSource } from "../versions/model.js"

/** A published Agent as listed. */
export const AgentSummary = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  description: Schema.String
}).annotations({
  identifier: "AgentSummary",
  examples: [{ id: "9b2c7d3e-1f4a-4c5b-8e6d-7a8b9c0d1e2f", name: "Support agent", description: "Answers from the handbook." }]
})
export type AgentSummary = typeof AgentSummary.Type

/** An Agent as listed with `include=drafts`. */
export const AgentDraftItem = Schema.Struct(draftListItemFields).annotations({ identifier: "AgentDraftItem" })
export type AgentDraftItem = typeof AgentDraftItem.Type

/** Fields an Agent list may be narrowed to. */
export const agentFields = ["id", "name", "description"] as const

const Instructions = Schema.String.pipe(Schema.maxLength(50_000)).annotations({
  message: () => "instructions must be at most 50000 characters"
})
const Model = Schema.NullOr(
  Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({ message: () => "model must be 1 to 200 characters" })
).annotations({
  description:
    "`builtin` or a model of the configured OpenAI-compatible server, kept as named. Absent or null: the Agent runs on the server's default model (`svc serve --model`, `SVC_MODEL`, else `builtin`), resolved at run time."
})

/** What an Agent is made of, besides its name and description (kept as the draft's JSON). */
export interface AgentDefinition {
  readonly instructions: string
  /** The model named; null when none is: the server's default, resolved at run time. */
  readonly model: string | null
  readonly greeting: string | null
  readonly knowledgebaseIds: ReadonlyArray<string>
  readonly flowIds: ReadonlyArray<string>
}

/** Body of `POST /agents`; without `model` (or with null) the Agent runs on the server's default model. */
export const CreateAgent = Schema.Struct({
  name: ItemName,
  description: Schema.optional(ItemDescription),
  instructions: Schema.optional(Instructions),
  model: Schema.optional(Model),
  greeting: Schema.optional(Greeting),
  knowledgebaseIds: Schema.optional(IdList("Knowledgebase")),
  flowIds: Schema.optional(IdList("Flow"))
}).annotations({
  identifier: "CreateAgent",
  ...strictBody,
  examples: [{ name: "Support agent", description: "Answers from the handbook.", knowledgebaseIds: ["3f0a3a5e-8d4b-4b8e-9c59-2a8e0f7d1c11"] }]
})
export type CreateAgent = typeof CreateAgent.Type

/** Body of `PATCH /agents/{id}/draft`: at least one property; `model: null` goes back to the server's default. */
export const PatchAgentDraft = Schema.Struct({
  name: Schema.optional(ItemName),
  description: Schema.optional(ItemDescription),
  instructions: Schema.optional(Instructions),
  model: Schema.optional(Model),
  greeting: Schema.optional(Greeting),
  knowledgebaseIds: Schema.optional(IdList("Knowledgebase")),
  flowIds: Schema.optional(IdList("Flow"))
}).annotations({ identifier: "PatchAgentDraft", ...strictBody, examples: [{ instructions: "Answer in two sentences." }] })
export type PatchAgentDraft = typeof PatchAgentDraft.Type

const definitionFields = {
  instructions: Schema.String,
  model: Schema.String.annotations({
    description: "The model the Agent runs on: the one it names (`modelSource` `explicit`), else the server's default at the time of this read (`modelSource` `default`)."
  }),
  modelSource: ModelSource,
  greeting: Schema.NullOr(Schema.String),
  knowledgebaseIds: Schema.Array(Uuid),
  flowIds: Schema.Array(Uuid)
}

/** An Agent's draft (`GET/PATCH /agents/{id}/draft`, `POST /agents`). */
export const AgentDraft = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  description: Schema.String,
  ...definitionFields,
  publishedVersion: Schema.NullOr(Schema.Int).annotations({ description: "The published version; null until the first publish." }),
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "AgentDraft" })
export type AgentDraft = typeof AgentDraft.Type

/** A published Agent (`GET /agents/{id}`): its published version, as it runs. */
export const Agent = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  description: Schema.String,
  ...definitionFields,
  version: Schema.Int,
  publishedAt: DateTime
}).annotations({ identifier: "Agent" })
export type Agent = typeof Agent.Type
