/**
 * Id arguments of the knowledge tools: a Knowledgebase, page or source by id or by exact name
 * (title for pages), over the same services' lists.
 */
import { Effect } from "effect"
import * as z from "zod/v4"
import type { Principal } from "../identity/domain.js"
import { pageSize } from "../platform/pagination.js"
import { idOrName } from "../mcp-door/tool.js"
import { KnowledgebaseService } from "./service.js"
import { PageService } from "./pages/service.js"
import { SourceService } from "./sources/service.js"
import { collectAll, resolveId } from "../mcp-door/resolve.js"

/** Why a parent argument is the tool's own. */
export const parentReason = `${idOrName}; null for the top level`

export const parentInput = z
  .string()
  .min(1)
  .nullable()
  .optional()
  .describe("A page or folder of this Knowledgebase (id or exact title); null or absent for the top level.")

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
