/** Agents, Flows and Apps as the builder keeps them: the resource schemas of the contract. */
import { Schema } from "effect"
import { Uuid } from "../knowledge/domain.js"

/** A published Agent as listed. */
export const AgentSummary = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  description: Schema.String
}).annotations({ identifier: "AgentSummary" })
export type AgentSummary = typeof AgentSummary.Type
