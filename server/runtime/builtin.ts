/**
 * `builtin`: the offline, deterministic model. It is not a language model and never writes as
 * one: it searches the Agent's Knowledgebases with the user's message (through the tool named
 * `searchToolName`), quotes the best passages with their citations, and says plainly when nothing
 * matched or there is nothing to search. The reply is markdown: each quote is its passage's clean
 * text (`quote.ts`: no search or page markers, nothing nested), the question's words that are not
 * stop words in bold. History and instructions do not change its answer: the
 * same message and the same search answers give the same reply, word for word.
 * In an execution's trace its model call lists the one message it reads (the user's) and no token
 * counts: it has no tokenizer, and an estimate would read as a count.
 */
import { Effect } from "effect"
import type { RunFailed } from "../platform/errors.js"
import { builtinModel } from "../platform/model-config.js"
import { type ModelImplementation, type ToolCall, type TurnRequest, type TurnResult, type TurnSink, type TurnStep, timedStep } from "./model.js"
import { escapeMarkdown, highlightedMarkdown, highlightStems, plainTextOf } from "./quote.js"
import { decodeSearchToolOutput, maxSearchQueryChars, type SearchToolPassage, searchToolName } from "./search-tool.js"
import { traced, tracedMessages, tracedText } from "./trace.js"

export { routeByDescription, type RouteChoice, type RouteMember } from "./route.js"

/** Most passages quoted in one reply. */
export const maxQuotedPassages = 3
/** Longest quote of one passage, in characters of its plain text (cut at a word, marked with "…"). */
export const maxQuoteChars = 400
const maxEchoChars = 100

const collapse = (text: string) => text.replace(/\s+/g, " ").trim()

/** `text` cut to at most `limit` characters at a word boundary, with "…" when cut. */
export const cutAtWord = (text: string, limit: number): string => {
  if (text.length <= limit) return text
  const cut = text.slice(0, limit - 1)
  const space = cut.lastIndexOf(" ")
  return `${(space > limit / 2 ? cut.slice(0, space) : cut).trimEnd()}…`
}

/** "Handbook.pdf, page 3", or the source alone without a section (plain text). */
export const citationOf = (passage: SearchToolPassage): string =>
  passage.section === null || passage.section.trim() === "" ? passage.source : `${passage.source}, ${passage.section}`

/** The paragraphs of builtin's reply to `message` given what the search found (`undefined`: no search tool). */
export const replyParagraphs = (message: string, passages: ReadonlyArray<SearchToolPassage> | undefined): Array<string> => {
  const asked = `"${escapeMarkdown(cutAtWord(collapse(message), maxEchoChars))}"`
  if (passages === undefined) {
    return [`There is no Knowledgebase to search for ${asked}. The builtin model answers only by quoting passages it finds in an Agent's Knowledgebases.`]
  }
  const seen = new Set<string>()
  const quoted = passages
    .map((passage) => ({ passage, text: plainTextOf(passage.text) }))
    .filter(({ passage, text }) => {
      const key = `${passage.source}\u0000${passage.section ?? ""}\u0000${text}`
      if (text === "" || seen.has(key)) return false
      seen.add(key)
      return true
    })
    .slice(0, maxQuotedPassages)
  if (quoted.length === 0) {
    return [`Nothing in the Knowledgebases matched ${asked}. The builtin model answers only by quoting passages it finds, so try other words.`]
  }
  const header =
    quoted.length === 1
      ? `One passage of the Knowledgebases matches ${asked} (quoted as found; the builtin model does not write answers):`
      : `${quoted.length} passages of the Knowledgebases match ${asked} (quoted as found; the builtin model does not write answers):`
  const stems = highlightStems(message)
  return [
    header,
    ...quoted.map(({ passage, text }, i) => `[${i + 1}] ${escapeMarkdown(citationOf(passage))}\n> ${highlightedMarkdown(cutAtWord(text, maxQuoteChars), stems)}`)
  ]
}

/** Answers a turn by retrieval, reporting each paragraph of the reply as a `delta`. */
const runTurn = (request: TurnRequest, onEvent: TurnSink): Effect.Effect<TurnResult, RunFailed> => {
  const steps: Array<TurnStep> = []
  const toolsCalled: Array<ToolCall> = []
  const search = request.tools.find((tool) => tool.name === searchToolName)
  const query = cutAtWord(collapse(request.message), maxSearchQueryChars)
  const found =
    search === undefined
      ? Effect.succeed(undefined)
      : query === ""
        ? Effect.succeed([])
        : Effect.gen(function* () {
            const args = { query }
            yield* onEvent({ type: "tool", name: search.name, arguments: args })
            toolsCalled.push({ name: search.name, arguments: args })
            const answer = yield* timedStep(
              "tool",
              search.name,
              steps,
              onEvent,
              traced("tool", search.name, () => ({ arguments: args }), search.run(args), (result) => ({ result: tracedText(result) }))
            )
            return (yield* decodeSearchToolOutput(answer)).passages
          })
  return timedStep(
    "model",
    builtinModel,
    steps,
    onEvent,
    traced(
      "model",
      builtinModel,
      () => ({ model: builtinModel, provider: "builtin", messages: tracedMessages([{ role: "user", text: request.message }]), tokensIn: null, tokensOut: null }),
      Effect.gen(function* () {
        const paragraphs = replyParagraphs(request.message, yield* found)
        const deltas = paragraphs.map((paragraph, i) => (i < paragraphs.length - 1 ? `${paragraph}\n\n` : paragraph))
        for (const text of deltas) yield* onEvent({ type: "delta", text })
        return deltas.join("")
      }),
      (reply) => ({ reply: tracedText(reply), toolCalls: toolsCalled.map((call) => ({ name: call.name, arguments: call.arguments })) })
    )
  ).pipe(Effect.map((reply) => ({ reply, toolsCalled, steps })))
}

/** The builtin model. */
export const builtinImplementation: ModelImplementation = { runTurn }
