/**
 * How the CLI fails: an expected failure (exit 1, the service's own message), bad usage (exit 2),
 * or something unexpected (exit 1, one line, never a stack trace).
 */
import { Cause, Option, Runtime } from "effect"

/** A failure the CLI reports as one `svc: <message>` line on stderr, exiting with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2
  ) {
    super(message)
    this.name = "CliError"
  }
}

/** An expected failure: the input was understood but refused (exit 1). */
export const failure = (message: string): CliError => new CliError(message, 1)

/** Bad usage: a missing, conflicting or malformed option (exit 2). */
export const usage = (message: string): CliError => new CliError(message, 2)

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
  const expected = Cause.failureOption(cause)
  if (Option.isSome(expected) && isExpected(expected.value)) return failure(expected.value.message)
  return failure(`unexpected error: ${describe(Cause.squash(cause))}`)
}

/** A one-line description of anything thrown. */
export const describe = (error: unknown): string => {
  if (Runtime.isFiberFailure(error)) {
    const cause = error[Runtime.FiberFailureCauseId]
    const expected = Cause.failureOption(cause)
    if (Option.isSome(expected) && isExpected(expected.value)) return firstLine(expected.value.message)
    return describe(Cause.squash(cause))
  }
  if (error instanceof Error) {
    const nested = (error as { cause?: unknown }).cause
    const own = firstLine(error.message) || error.name
    return nested instanceof Error && !own.includes(firstLine(nested.message)) ? `${own}: ${describe(nested)}` : own
  }
  if (isExpected(error)) return firstLine(error.message)
  return firstLine(String(error)) || "unknown error"
}

/** Converts anything thrown into a CLI error. */
export const toCliError = (error: unknown): CliError => {
  if (error instanceof CliError) return error
  if (isExpected(error)) return failure(error.message)
  if (Runtime.isFiberFailure(error)) return fromCause(error[Runtime.FiberFailureCauseId])
  return failure(`unexpected error: ${describe(error)}`)
}
