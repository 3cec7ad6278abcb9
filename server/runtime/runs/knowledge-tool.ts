/**
 * The `search_knowledgebases` tool of a run, over the search service: each of the Agent's
 * Knowledgebases is searched (documents and pages) for the caller, without a credit of its own
 * (the run pays one), and the best passages of all of them are answered in the tool's format. A
 * Knowledgebase deleted since the Agent was saved is skipped. In an execution's trace the tool's
 * span lists the passages answered with their scores and citations.
 */
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { RunFailed } from "../../platform/errors.js"
import { SearchService } from "../../knowledge/search/service.js"
import type { ModelTool } from "../model.js"
import { annotateSpan, tracedText } from "../trace.js"
import {
  encodeSearchToolOutput,
  maxSearchQueryChars,
  passageOfSearchResult,
  searchToolDescription,
  searchToolName,
  searchToolParameters
} from "../search-tool.js"

/** Passages the tool answers at most. */
export const passagesPerSearch = 5

/** The search tool over `knowledgebaseIds` for `actor`. */
export const knowledgeTool = (
  search: SearchService,
  actor: Principal,
  knowledgebaseIds: ReadonlyArray<string>
): ModelTool => ({
  name: searchToolName,
  description: searchToolDescription,
  parameters: searchToolParameters,
  run: (args) =>
    Effect.gen(function* () {
      const query = String((args as { query?: unknown }).query ?? "").trim().slice(0, maxSearchQueryChars)
      const found = yield* Effect.forEach(knowledgebaseIds, (id) =>
        search.search(actor, id, { query, kinds: ["documents", "pages"], limit: passagesPerSearch }, { billed: false }).pipe(
          Effect.map((page) => page.results),
          Effect.catchTags({
            NotFound: () => Effect.succeed([]),
            InvalidRequest: () => Effect.succeed([]),
            InsufficientCredits: (error) => Effect.fail(new RunFailed({ message: error.message }))
          })
        )
      )
      const best = found
        .flat()
        .sort((a, b) => b.score - a.score)
        .slice(0, passagesPerSearch)
      yield* annotateSpan(() => ({
        passages: best.map((result) => {
          const passage = passageOfSearchResult(result)
          return { ...tracedText(passage.text), source: passage.source, section: passage.section ?? null, score: result.score, citation: result.citation }
        })
      }))
      return encodeSearchToolOutput({ passages: best.map(passageOfSearchResult) })
    })
})
