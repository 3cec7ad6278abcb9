/**
 * How the CLI fails: an expected failure (exit 1, the service's own message), bad usage (exit 2),
 * or something unexpected (exit 1, one line, never a stack trace).
 */
import type { Cause } from "effect"
import { fiberFailureCause, firstFailure, squashCause } from "./causes.js"

/**
 * A failure the CLI reports as one `svc: <line>` line on stderr, exiting with `exitCode`; with `--json`
 * also as the error envelope `{"error":{"code","message"}}` on stdout.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
    /** A snake_case code: the service's or the API's own, else one of the CLI's (see `failure`, `usage`). */
    readonly code: string,
    /** The human line, when it says more than `message` (an API failure names its code first). */
    readonly line: string = message
  ) {
    super(message)
    this.name = "CliError"
  }
}

/** An expected failure: the input was understood but refused (exit 1, code `command_failed` unless given). */
export const failure = (message: string, code = "command_failed"): CliError => new CliError(message, 1, code)

/** Bad usage: a missing, conflicting or malformed option (exit 2, code `invalid_usage`). */
export const usage = (message: string): CliError => new CliError(message, 2, "invalid_usage")

/** Something that should not happen (exit 1, code `unexpected_error`). */
const unexpected = (error: unknown): CliError => failure(`unexpected error: ${describe(error)}`, "unexpected_error")

/** Whether `value` is one of the service's expected failures (`_tag`, `code`, `message`). */
const isExpected = (value: unknown): value is { readonly code: string; readonly message: string } =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as { _tag?: unknown })._tag === "string" &&
  typeof (value as { code?: unknown }).code === "string" &&
  typeof (value as { message?: unknown }).message === "string"

const firstLine = (text: string): string => text.split("\n").find((line) => line.trim() !== "")?.trim() ?? ""

/** Turns an Effect failure cause into a CLI error: expected failures keep their message. */
export const fromCause = (cause: Cause.Cause<unknown>): CliError => {
  const expected = firstFailure(cause)
  if (expected !== undefined && isExpected(expected.error)) return failure(expected.error.message, expected.error.code)
  return unexpected(squashCause(cause))
}

/** A one-line description of anything thrown. */
export const describe = (error: unknown): string => {
  const cause = fiberFailureCause(error)
  if (cause !== undefined) {
    const expected = firstFailure(cause)
    if (expected !== undefined && isExpected(expected.error)) return firstLine(expected.error.message)
    return describe(squashCause(cause))
  }
  if (error instanceof Error) {
    const nested = (error as { cause?: unknown }).cause
    if (firstLine(error.message) === "" && nested instanceof Error) return describe(nested)
    const own = firstLine(error.message) || error.name
    return nested instanceof Error && !own.includes(firstLine(nested.message)) ? `${own}: ${describe(nested)}` : own
  }
  if (isExpected(error)) return firstLine(error.message)
  return firstLine(String(error)) || "unknown error"
}

/** The Node system error code (`EADDRINUSE`, `ENOENT`, ...) of `error` or of an error it wraps. */
export const errnoCode = (error: unknown): string | undefined => {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 10; depth++) {
    const cause = fiberFailureCause(current)
    if (cause !== undefined) {
      current = squashCause(cause)
      continue
    }
    const code = (current as { code?: unknown }).code
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** Converts anything thrown into a CLI error. */
export const toCliError = (error: unknown): CliError => {
  if (error instanceof CliError) return error
  if (isExpected(error)) return failure(error.message, error.code)
  const cause = fiberFailureCause(error)
  if (cause !== undefined) return fromCause(cause)
  return unexpected(error)
}
