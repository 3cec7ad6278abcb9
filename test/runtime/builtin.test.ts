/**
 * `builtin`: answers by retrieval through a fake search tool, quoting and citing what it found,
 * word for word the same for the same input; says so when nothing matched or there is nothing to
 * search; routes App messages by member descriptions.
 */
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { RunFailed } from "../../server/platform/errors.js"
import { builtinImplementation, routeByDescription } from "../../server/runtime/builtin.js"
import type { ModelTool, TurnEvent, TurnRequest } from "../../server/runtime/model.js"
import {
  encodeSearchToolOutput,
  passageOfSearchResult,
  searchToolDescription,
  searchToolName,
  searchToolParameters,
  type SearchToolPassage
} from "../../server/runtime/search-tool.js"

const handbook: ReadonlyArray<typeof SearchToolPassage.Encoded> = [
  { text: "Refunds are accepted within 30 days of purchase,\n with the receipt.", source: "Handbook.pdf", section: "page 3" },
  { text: "Store credit is offered after 30 days.", source: "Returns", section: null },
  { text: "Refunds are accepted within 30 days of purchase, with the receipt.", source: "Handbook.pdf", section: "page 3" },
  { text: "Gift cards cannot be refunded.", source: "FAQ" },
  { text: "A fourth distinct passage.", source: "Extra", section: "Rows 2-4" }
]

/** A search tool answering `passages` and recording the arguments it got. */
const fakeSearch = (passages: ReadonlyArray<typeof SearchToolPassage.Encoded>, seen: Array<unknown> = []): ModelTool => ({
  name: searchToolName,
  description: searchToolDescription,
  parameters: searchToolParameters,
  run: (args) => Effect.sync(() => (seen.push(args), encodeSearchToolOutput({ passages })))
})

const request = (message: string, tools: ReadonlyArray<ModelTool>, history: TurnRequest["history"] = []): TurnRequest => ({
  model: "builtin",
  instructions: "Be helpful.",
  history,
  message,
  tools
})

const run = (req: TurnRequest) => {
  const events: Array<TurnEvent> = []
  return Effect.runPromise(
    builtinImplementation.runTurn(req, (event) => Effect.sync(() => void events.push(event))).pipe(Effect.map((result) => ({ result, events })))
  )
}

describe("builtin answers by retrieval", () => {
  it("searches with the user's message and quotes the passages it used with their citations", async () => {
    const seen: Array<unknown> = []
    const { result } = await run(request("  What is the   refund window? ", [fakeSearch(handbook, seen)]))
    expect(seen).toEqual([{ query: "What is the refund window?" }])
    expect(result.reply).toBe(
      [
        '3 passages of the Knowledgebases match "What is the refund window?" (quoted as found; the builtin model does not write answers):',
        "[1] Handbook.pdf, page 3\n> **Refunds** are accepted within 30 days of purchase, with the receipt.",
        "[2] Returns\n> Store credit is offered after 30 days.",
        "[3] FAQ\n> Gift cards cannot be **refunded**."
      ].join("\n\n")
    )
    expect(result.toolsCalled).toEqual([{ name: searchToolName, arguments: { query: "What is the refund window?" } }])
    expect(result.steps.map((step) => [step.type, step.name])).toEqual([
      ["tool", searchToolName],
      ["model", "builtin"]
    ])
  })

  it("gives the same reply, deltas and tool calls for the same input, whatever the history", async () => {
    const first = await run(request("refund window", [fakeSearch(handbook)]))
    const second = await run(request("refund window", [fakeSearch(handbook)], [{ role: "user", text: "earlier" }]))
    expect(second.result.reply).toBe(first.result.reply)
    expect(second.result.toolsCalled).toEqual(first.result.toolsCalled)
    const deltas = (events: Array<TurnEvent>) => events.flatMap((e) => (e.type === "delta" ? [e.text] : []))
    expect(deltas(second.events)).toEqual(deltas(first.events))
  })

  it("streams the reply as deltas that join into it, after announcing the tool", async () => {
    const { result, events } = await run(request("refund window", [fakeSearch(handbook)]))
    const kinds = events.map((e) => e.type)
    expect(kinds.indexOf("tool")).toBeLessThan(kinds.indexOf("delta"))
    const deltas = events.flatMap((e) => (e.type === "delta" ? [e.text] : []))
    expect(deltas.length).toBe(4)
    expect(deltas.join("")).toBe(result.reply)
    expect(events.filter((e) => e.type === "step")).toHaveLength(2)
  })

  it("quotes one passage in the singular and cuts a long one at a word", async () => {
    const long = `${"word ".repeat(150)}end`
    const { result } = await run(request("words", [fakeSearch([{ text: long, source: "Long page", section: "Intro" }])]))
    const [header, quote] = result.reply.split("\n\n")
    expect(header).toBe('One passage of the Knowledgebases matches "words" (quoted as found; the builtin model does not write answers):')
    const quoted = quote!.split("\n> ")[1]!
    expect(quoted.endsWith("**word**…")).toBe(true)
    expect(quoted.replaceAll("**", "").length).toBeLessThanOrEqual(400)
  })

  it("says plainly when nothing matched", async () => {
    const { result } = await run(request("parking on Sundays", [fakeSearch([])]))
    expect(result.reply).toBe(
      'Nothing in the Knowledgebases matched "parking on Sundays". The builtin model answers only by quoting passages it finds, so try other words.'
    )
    expect(result.toolsCalled).toHaveLength(1)
  })

  it("does not search for a blank message", async () => {
    const seen: Array<unknown> = []
    const { result } = await run(request(" \n ", [fakeSearch(handbook, seen)]))
    expect(seen).toEqual([])
    expect(result.toolsCalled).toEqual([])
    expect(result.reply.startsWith("Nothing in the Knowledgebases matched")).toBe(true)
  })

  it("says so when there is no Knowledgebase to search, calling no tool", async () => {
    const { result } = await run(request("refund window", []))
    expect(result.reply).toBe(
      'There is no Knowledgebase to search for "refund window". The builtin model answers only by quoting passages it finds in an Agent\'s Knowledgebases.'
    )
    expect(result.toolsCalled).toEqual([])
  })

  it("fails the run when the search tool answers another shape", async () => {
    const broken: ModelTool = { ...fakeSearch([]), run: () => Effect.succeed('{"hits": []}') }
    const exit = await Effect.runPromiseExit(builtinImplementation.runTurn(request("refund", [broken]), () => Effect.void))
    expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error).toBeInstanceOf(RunFailed)
  })

  it("passes on the search tool's own failure", async () => {
    const failing: ModelTool = { ...fakeSearch([]), run: () => Effect.fail(new RunFailed({ message: "search is down" })) }
    const exit = await Effect.runPromiseExit(builtinImplementation.runTurn(request("refund", [failing]), () => Effect.void))
    expect(exit).toEqual(Exit.fail(new RunFailed({ message: "search is down" })))
  })
})

describe("routeByDescription", () => {
  const members = [
    { id: "a", name: "Support agent", description: "Answers questions about refunds, returns and orders from the handbook." },
    { id: "f", name: "Lead qualification", description: "Qualifies sales leads: company name, budget and team size." },
    { id: "b", name: "Billing agent", description: "Answers questions about invoices and billing." }
  ]

  it("picks the member whose description shares the message's words", () => {
    expect(routeByDescription("How do I get a refund for my order?", members)?.member.id).toBe("a")
    expect(routeByDescription("Our company has a budget for a team of 12", members)?.member.id).toBe("f")
    expect(routeByDescription("Where is my invoice?", members)?.member.id).toBe("b")
  })

  it("compares words by stem and names the words that matched", () => {
    const choice = routeByDescription("Refunded orders, returning items", members)
    expect(choice?.member.id).toBe("a")
    expect(choice?.matched).toEqual(["refunded", "orders", "returning"])
  })

  it("weighs a word by how few members hold it", () => {
    // Five members hold "account" and "help", one holds "invoice": the rare word outweighs the two
    // common ones (ln 7 > 2 ln 2.2), where counting words would pick the first of the five.
    const many = [
      ...["p", "q", "r", "s", "t"].map((id) => ({ id, name: `Desk ${id}`, description: "Help with your account." })),
      { id: "i", name: "Invoices", description: "Sends an invoice again." }
    ]
    expect(routeByDescription("help with my account invoice", many)?.member.id).toBe("i")
  })

  it("breaks a tie by the members' order", () => {
    const twins = [
      { id: "x", name: "One", description: "Handles shipping." },
      { id: "y", name: "Two", description: "Handles shipping." }
    ]
    expect(routeByDescription("shipping", twins)?.member.id).toBe("x")
    expect(routeByDescription("shipping", [...twins].reverse())?.member.id).toBe("y")
  })

  it("routes to none when no content word matches", () => {
    expect(routeByDescription("What is the weather like?", members)).toBeNull()
    expect(routeByDescription("the and of about", members)).toBeNull()
    expect(routeByDescription("refund", [])).toBeNull()
  })
})

describe("passageOfSearchResult", () => {
  const kb = "9b2c7d3e-1f4a-4c5b-8e6d-7a8b9c0d1e2f"
  it("cites a document by its source and section, a page by its title, a memory as such", () => {
    const document = passageOfSearchResult({
      kind: "document",
      id: "12",
      title: "Handbook.pdf",
      snippet: "Refunds within **30** days.",
      score: 1,
      citation: { kind: "document", knowledgebaseId: kb, sourceId: kb, sourceName: "Handbook.pdf", passageId: "12", section: "page 3" }
    })
    const page = passageOfSearchResult({
      kind: "page",
      id: kb,
      title: "Returns",
      snippet: "Store credit after 30 days.",
      score: 1,
      citation: { kind: "page", knowledgebaseId: kb, pageId: kb, title: "Returns" }
    })
    const memory = passageOfSearchResult({
      kind: "memory",
      id: kb,
      title: "Memory",
      snippet: "Prefers email.",
      score: 1,
      citation: { kind: "memory", knowledgebaseId: null, memoryId: kb }
    })
    expect([document, page, memory]).toEqual([
      { text: "Refunds within **30** days.", source: "Handbook.pdf", section: "page 3" },
      { text: "Store credit after 30 days.", source: "Returns", section: null },
      { text: "Prefers email.", source: "Memory", section: null }
    ])
  })
})
