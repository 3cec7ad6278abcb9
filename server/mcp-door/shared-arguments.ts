/**
 * Arguments many tools share: `limit` and `cursor` of lists without a REST twin, `fields`,
 * `updatedSince` (checked as the REST query parameter is) and lists of ids or names.
 */
import { Effect, Schema } from "effect"
import * as z from "zod/v4"
import { decodeBody } from "../platform/request/decode.js"
import { ListParams, pageSize, UpdatedSinceParam } from "../platform/pagination.js"
import type { Operation } from "./operation.js"
import { operationArgument, schemaArgument } from "./operation-arguments.js"

/**
 * `limit` and `cursor` as every list takes them (`ListParams` of `platform/pagination.ts`), for the
 * list tools without a REST twin; a tool mirroring a list operation takes them from it (`listArguments`).
 */
export const listInput = {
  limit: (schemaArgument(Schema.Struct(ListParams), "limit") as z.ZodType<number>).optional().describe(`Page size, 1 to ${pageSize.max} (default ${pageSize.default}).`),
  cursor: (schemaArgument(Schema.Struct(ListParams), "cursor") as z.ZodType<string>).optional().describe("The `nextCursor` of the previous page; opaque.")
}

/** `fields` over a resource's field names (the tool's own: see `fieldsList`). */
export const fieldsInput = (names: readonly [string, ...Array<string>]) =>
  z.array(z.enum(names)).min(1).optional().describe("Only these fields of each item (default: all).")

/** `updatedSince` of a list operation, checked and normalized to UTC as the REST query parameter is. */
export const updatedSinceInput = (mirrored: Operation<{ readonly updatedSince?: string | undefined }>) =>
  operationArgument(mirrored, "updatedSince").optional().describe("ISO 8601 date-time: only items updated at or after it.")

const UpdatedSince = Schema.Struct({ updatedSince: UpdatedSinceParam })

/** The normalized `updatedSince`, or an `invalid_request` naming it. */
export const decodeUpdatedSince = (value: string | undefined) =>
  value === undefined ? Effect.succeed(undefined) : Effect.map(decodeBody(UpdatedSince)({ updatedSince: value }), (decoded) => decoded.updatedSince)

/** Each id of a list argument, resolved by `one`. */
export const idsOf = <E, R>(given: ReadonlyArray<string> | undefined, one: (item: string) => Effect.Effect<string, E, R>) =>
  given === undefined ? Effect.succeed(undefined) : Effect.forEach(given, one)
