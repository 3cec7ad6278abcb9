/** Agents as the builder keeps them: the resource schemas of the contract. */
import { Schema } from "effect"
import { Uuid } from "../../platform/schema.js"

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

/** Fields an Agent list may be narrowed to. */
export const agentFields = ["id", "name", "description"] as const
