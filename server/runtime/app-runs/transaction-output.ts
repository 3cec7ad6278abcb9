/**
 * How a transaction's reply becomes its output object. On a language model the Supervisor is told
 * to answer with one JSON object valid under the output schema, and its reply is parsed (a
 * ```json fence around it is allowed). On `builtin`, which writes no JSON, the mapping is fixed:
 * an output schema with exactly one required property whose type is `string` gets the member's
 * reply text there; any other schema cannot be filled. Either way the object is then validated
 * against the output schema before it is returned: a `validation` span of the execution's trace.
 */
import { Effect, Either } from "effect"
import { reportedProblems } from "../../builder/flows/problems.js"
import { RunFailed } from "../../platform/errors.js"
import { annotateSpan, traced } from "../trace.js"
import { schemaProblems } from "./schema-check.js"

/** The Supervisor's extra instructions for a transaction on a language model. */
export const transactionInstructions = (outputSchema: Record<string, unknown>): string =>
  `The user's message is a JSON input. Answer with only one JSON object, no other text, valid under this JSON Schema: ${JSON.stringify(outputSchema)}`

/** The single required string property `builtin` fills, or null when the schema has none or several. */
export const builtinOutputProperty = (outputSchema: Record<string, unknown>): string | null => {
  const required = outputSchema["required"]
  const properties = outputSchema["properties"]
  if (!Array.isArray(required) || required.length !== 1 || typeof required[0] !== "string") return null
  if (properties === null || typeof properties !== "object") return null
  const property = (properties as Record<string, unknown>)[required[0]]
  if (property === null || typeof property !== "object" || (property as { type?: unknown }).type !== "string") return null
  return required[0]
}

/** The output object `builtin` makes of `reply`, or why it cannot. */
export const builtinOutput = (outputSchema: Record<string, unknown>, reply: string): Either.Either<Record<string, unknown>, string> => {
  const property = builtinOutputProperty(outputSchema)
  return property === null
    ? Either.left(
        "The builtin model cannot fill this output schema: it fills only a schema with exactly one required property of type string, with the member's reply text."
      )
    : Either.right({ [property]: reply })
}

/** The JSON object a language model answered, or why the reply is not one. */
export const modelOutput = (reply: string): Either.Either<Record<string, unknown>, string> => {
  const text = reply.trim().replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i, "$1").trim()
  try {
    const value: unknown = JSON.parse(text)
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return Either.right(value as Record<string, unknown>)
  } catch {
    // answered below
  }
  return Either.left(`The reply is not a JSON object: ${JSON.stringify(reply.slice(0, 200))}.`)
}

/**
 * The output object of a transaction whose Supervisor replied `reply` on `provider`, valid under
 * `outputSchema`; else `run_failed` naming what is wrong. Recorded as the `validation` span
 * `output` of the execution's trace, with its problems.
 */
export const checkedOutput = (
  provider: "builtin" | "openai",
  outputSchema: Record<string, unknown>,
  reply: string
): Effect.Effect<Record<string, unknown>, RunFailed> => {
  const refused = (problems: ReadonlyArray<string>, message: string) =>
    Effect.zipRight(
      annotateSpan(() => ({ validation: { schema: "output", valid: false, problems } })),
      Effect.fail(new RunFailed({ message }))
    )
  return traced(
    "validation",
    "output",
    () => ({ validation: { schema: "output", valid: true, problems: [] } }),
    Effect.suspend(() => {
      const shaped = provider === "builtin" ? builtinOutput(outputSchema, reply) : modelOutput(reply)
      if (Either.isLeft(shaped)) return refused([shaped.left], shaped.left)
      const problems = schemaProblems("output", outputSchema, shaped.right)
      if (problems.length > 0) {
        return refused(problems, `The reply does not match the App's output schema: ${reportedProblems(problems).join("; ")}. Nothing was charged.`)
      }
      return Effect.succeed(shaped.right)
    })
  )
}
