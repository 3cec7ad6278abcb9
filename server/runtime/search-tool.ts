/**
 * The Knowledgebase search tool as models see it: its name, description and parameters, and the
 * JSON its `run` answers with. The run layer builds the tool over the search service with these;
 * `builtin` calls it and reads its answer back, an OpenAI-compatible model reads the same JSON.
 */
import { Effect, Schema } from "effect"
import type { SearchResult } from "../knowledge/search/domain.js"
import { RunFailed } from "../platform/errors.js"
import type { JsonSchemaObject } from "./model.js"

/** Name of the search tool. */
export const searchToolName = "search_knowledgebases"

/** What the search tool says of itself to a model. */
export const searchToolDescription =
  "Search the Agent's Knowledgebases. Answers passages as JSON, each with its text and citation (source name or page title, and section)."

/** Longest query the search tool takes (the search endpoint's limit). */
export const maxSearchQueryChars = 1_000

/** Parameters of the search tool. */
export const searchToolParameters: JsonSchemaObject = {
  type: "object",
  properties: {
    query: { type: "string", minLength: 1, maxLength: maxSearchQueryChars, description: "What to look for, in plain words." }
  },
  required: ["query"],
  additionalProperties: false
}

/** One passage found: its text and where it comes from. */
export const SearchToolPassage = Schema.Struct({
  text: Schema.String,
  /** The document source's name, or the page's title. */
  source: Schema.String,
  /** The section within the source (a PDF page, a heading, CSV rows), when known. */
  section: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
})
export type SearchToolPassage = typeof SearchToolPassage.Type

/** The search tool's answer. */
export const SearchToolOutput = Schema.Struct({ passages: Schema.Array(SearchToolPassage) })
export type SearchToolOutput = typeof SearchToolOutput.Type

/** The text a search tool answers with. */
export const encodeSearchToolOutput = (output: typeof SearchToolOutput.Encoded): string => JSON.stringify(output)

const decodeOutput = Schema.decodeUnknown(Schema.parseJson(SearchToolOutput))

/** A search tool's answer read back; an answer of another shape fails the run. */
export const decodeSearchToolOutput = (text: string): Effect.Effect<SearchToolOutput, RunFailed> =>
  decodeOutput(text).pipe(
    Effect.mapError(() => new RunFailed({ message: `The ${searchToolName} tool answered in an unexpected shape.` }))
  )

/**
 * A search hit as the tool answers it: the snippet's text, cited by the document source's name and
 * section, the page's title, or "Memory".
 */
export const passageOfSearchResult = (result: SearchResult): typeof SearchToolPassage.Encoded => {
  const { citation } = result
  if (citation.kind === "document") {
    return { text: result.snippet, source: citation.sourceName ?? result.title, section: citation.section ?? null }
  }
  if (citation.kind === "page") return { text: result.snippet, source: citation.title ?? result.title, section: null }
  return { text: result.snippet, source: "Memory", section: null }
}
