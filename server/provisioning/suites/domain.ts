/** Suites: named bundles of Apps that a Portal shows together; a group grant on a Suite covers every App in it. */
import { Schema } from "effect"
import { Uuid } from "../../platform/schema.js"

/** A Suite (conventions: Memories and Suites). */
export const Suite = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  appIds: Schema.Array(Uuid).annotations({ description: "The Apps of the Suite, in the order given." })
}).annotations({ identifier: "Suite" })
export type Suite = typeof Suite.Type

/** What a Suite is created from. */
export interface CreateSuite {
  readonly name: string
  readonly appIds: ReadonlyArray<string>
}
