/**
 * Decoding what a client sent into typed failures, whatever door it came through: input that does
 * not fit its schema is an `InvalidRequest` naming each field, never a defect. REST handlers that
 * read their body themselves and MCP tools use `decodeBody`; the HTTP middleware uses the same
 * wording (`describeIssues`) for the framework's own decode failures.
 */
import { Effect, ParseResult, Schema } from "effect"
import { InvalidRequest } from "../errors.js"

/** One issue of a failed decode: where, and what is wrong. */
export interface DecodeIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** One message per field, naming it: the first issue found at each path. */
export const describeIssues = (issues: ReadonlyArray<DecodeIssue>): string => {
  const byPath = new Map<string, string>()
  for (const issue of issues) {
    const path = issue.path.map(String).join(".")
    if (!byPath.has(path)) byPath.set(path, issue.message)
  }
  return [...byPath].map(([path, message]) => (path ? `${path}: ${message}` : message)).join("; ")
}

/** Decodes a body already read into `schema`, failing with an `InvalidRequest` naming each field. */
export const decodeBody =
  <A, I>(schema: Schema.Schema<A, I, never>) =>
  (input: unknown): Effect.Effect<A, InvalidRequest> =>
    Effect.mapError(
      Schema.decodeUnknown(schema)(input),
      (error) =>
        new InvalidRequest({ message: describeIssues(ParseResult.ArrayFormatter.formatErrorSync(error)) || "The body is invalid." })
    )
