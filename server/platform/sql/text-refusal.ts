/**
 * PostgreSQL text cannot hold the NUL character (U+0000), which SQLite stores: a statement given
 * such text fails with SQLSTATE 22021. That is the client's text, not a fault of the service, so
 * every adapter (REST, MCP) answers it as 400 `invalid_request` through this one check.
 */
import { Cause } from "effect"
import { InvalidRequest } from "../errors.js"

/** The refusal for a failure caused by text holding U+0000, or null when `cause` is something else. */
export const nulTextRefusal = (cause: Cause.Cause<unknown>): InvalidRequest | null => {
  const error = Cause.squash(cause) as { readonly _tag?: string; readonly cause?: { readonly code?: unknown } }
  return error?._tag === "SqlError" && error.cause?.code === "22021"
    ? new InvalidRequest({ message: "Text may not contain the NUL character (U+0000)." })
    : null
}
