/** Schemas every resource of the contract shares. */
import { Schema } from "effect"

/** A UUID string. */
export const Uuid = Schema.UUID.annotations({ examples: ["3f0a3a5e-8d4b-4b8e-9c59-2a8e0f7d1c11"] })
/** An ISO 8601 date-time string. */
export const DateTime = Schema.String.annotations({
  format: "date-time",
  examples: ["2026-11-21T10:00:00.000Z"]
})
