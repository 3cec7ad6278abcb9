/**
 * Id arguments of the knowledge tools: a Knowledgebase, page or source by id or by exact name
 * (title for pages), over the same services' lists, and the list arguments every list tool takes.
 */
import { Effect, Schema } from "effect"
import * as z from "zod/v4"
import type { Principal } from "../../identity/domain.js"
import { decodeBody } from "../../platform/request/decode.js"
import { ListParams, pageSize, UpdatedSinceParam } from "../../platform/pagination.js"
import { KnowledgebaseService } from "../../knowledge/service.js"
import { PageService } from "../../knowledge/pages/service.js"
import { SourceService } from "../../knowledge/sources/service.js"
import type { Operation } from "../operation.js"
import { operationArgument, schemaArgument } from "../operation-arguments.js"
import { collectAll, resolveId } from "../resolve.js"

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

/** A Knowledgebase argument: `Id or exact name` (the tool's own: see `idOrName`). */
export const knowledgebaseInput = z.string().min(1).describe("The Knowledgebase's id or exact name.")

/** The Knowledgebase id an argument names. */
export const knowledgebaseIdOf = (actor: Principal, given: string, argument = "knowledgebaseId") =>
  Effect.flatMap(KnowledgebaseService, (knowledgebases) =>
    resolveId(
      "Knowledgebase",
      argument,
      given,
      collectAll((cursor) => knowledgebases.list(actor, { limit: pageSize.max, cursor }))
    )
  )

/** A Knowledgebase argument that may also be `all` (search, changes). */
export const knowledgebaseOrAllIdOf = (actor: Principal, given: string) =>
  given === "all" ? Effect.succeed("all") : knowledgebaseIdOf(actor, given)

/** The page id an argument names within a Knowledgebase (by id or exact title). */
export const pageIdOf = (actor: Principal, knowledgebaseId: string, given: string, argument = "pageId") =>
  Effect.flatMap(PageService, (pages) =>
    resolveId(
      "page",
      argument,
      given,
      Effect.map(
        collectAll((cursor) => pages.index(actor, knowledgebaseId, { limit: pageSize.max, cursor })),
        (items) => items.map((item) => ({ id: item.id, name: item.title }))
      )
    )
  )

/** A parent page argument: null (top level), or a page or folder by id or exact title. */
export const parentPageIdOf = (actor: Principal, knowledgebaseId: string, given: string | null | undefined) =>
  given === undefined || given === null ? Effect.succeed(given) : pageIdOf(actor, knowledgebaseId, given, "parentPageId")

/** The source id an argument names within a Knowledgebase (by id or exact name). */
export const sourceIdOf = (actor: Principal, knowledgebaseId: string, given: string) =>
  Effect.flatMap(SourceService, (sources) =>
    resolveId(
      "source",
      "sourceId",
      given,
      Effect.map(
        collectAll((cursor) => sources.list(actor, knowledgebaseId, { limit: pageSize.max, cursor })),
        (items) => items.map((item) => ({ id: item.id, name: item.name }))
      )
    )
  )
