/** The changes feed: one entry per change of a page, folder or source. */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"

/** One entry of the changes feed: one change of a page, folder or source (every change is kept). */
export const Change = Schema.Struct({
  knowledgebaseId: Uuid,
  type: Schema.Literal("page", "folder", "source"),
  id: Uuid,
  change: Schema.String,
  changedAt: DateTime
}).annotations({ identifier: "Change" })
export type Change = typeof Change.Type
