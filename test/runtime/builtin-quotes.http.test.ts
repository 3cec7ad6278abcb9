/**
 * The builtin model quotes clean passages (issue 21): a search snippet's markers, nested or cut
 * off, and the page's own markdown never reach the reply; the question's words that are not stop
 * words are bold, one whole word at a time, so markers never nest and always close. Checked on the
 * pure helpers and through the real thing: the demo's Agent over HTTP, with an unrelated handbook
 * added to its Knowledgebase, answering the demo's questions.
 */
import fc from "fast-check"
import type { Nodes } from "mdast"
import { fromMarkdown } from "mdast-util-from-markdown"
import { eng } from "stopword"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { highlightedMarkdown, highlightStems, plainTextOf } from "../../server/runtime/quote.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { readySource } from "../support/sources.js"

const stopWords = new Set(eng)

/** Every node of a parsed markdown tree. */
const nodesOf = (node: Nodes): Array<Nodes> => [node, ...("children" in node ? node.children.flatMap((child) => nodesOf(child)) : [])]

/** What a renderer makes of `markdown`: its bold runs and its visible text. */
const rendered = (markdown: string) => {
  const nodes = nodesOf(fromMarkdown(markdown))
  const bold = nodes.filter((node) => node.type === "strong").map((node) => nodesOf(node).flatMap((n) => (n.type === "text" ? [n.value] : [])).join(""))
  const nested = nodes.filter((node) => node.type === "strong" && nodesOf(node).slice(1).some((inner) => inner.type === "strong" || inner.type === "emphasis"))
  const text = nodes.flatMap((node) => (node.type === "text" ? [node.value] : [])).join("")
  return { bold, nested, text }
}

/** The reply's checks: bold runs are single words that are not stop words, none nested, no marker left as text. */
const expectCleanQuotes = (reply: string) => {
  const { bold, nested, text } = rendered(reply)
  expect(nested).toEqual([])
  expect(bold.filter((word) => !/^[\p{L}\p{N}]+$/u.test(word) || stopWords.has(word.toLowerCase()))).toEqual([])
  expect(text).not.toContain("**")
  expect(reply.match(/(?<!\\)\*\*/g)?.length ?? 0).toBe(bold.length * 2)
  return bold
}

describe("clean quotes of a snippet", () => {
  const stems = highlightStems("What is the warranty on a chair?")

  it("drops the search's markers, nested inside the page's bold, and bolds the question's word once", () => {
    const snippet = "# Warranty and assembly Every refurbished **chair** and desk carries a **2-year **warranty**** on its mechanics"
    const text = plainTextOf(snippet)
    expect(text).toBe("Warranty and assembly Every refurbished chair and desk carries a 2-year warranty on its mechanics")
    expect(highlightedMarkdown(text, stems)).toBe(
      "**Warranty** and assembly Every refurbished **chair** and desk carries a 2-year **warranty** on its mechanics"
    )
  })

  it("drops markers a snippet cut off, stop-word highlights, links' targets and HTML; keeps a leading list number as text", () => {
    expect(plainTextOf("…carries a **2-year")).toBe("…carries a 2-year")
    expect(plainTextOf("report **to** the **duty** manager **warranty")).toBe("report to the duty manager warranty")
    expect(plainTextOf("see [Refunds](svcpage://abc) <b>now</b> &amp; `code`")).toBe("see Refunds now & code")
    expect(plainTextOf("1) first - second > third")).toBe("1) first - second > third")
    expect(plainTextOf("  \n ")).toBe("")
  })

  it("never bolds a stop word, even when the question is made of them", () => {
    expect(highlightedMarkdown("Report to the duty manager", highlightStems("Shipping to Norway?"))).toBe("Report to the duty manager")
    expect(highlightStems("to be or to be, what is it?").size).toBe(0)
    expect(highlightedMarkdown("Shipping to Norway takes a week", highlightStems("shipping to norway"))).toBe("**Shipping** to **Norway** takes a week")
  })

  it("escapes what would render as markup, so a quote reads as written", () => {
    const markdown = highlightedMarkdown("1. a *star*, <script>x</script>, [link] and ~~gone~~ file_name _here_", stems)
    expect(markdown).toBe("1\\. a \\*star\\*, \\<script>x\\</script>, \\[link\\] and \\~\\~gone\\~\\~ file_name \\_here\\_")
    expect(rendered(`> ${markdown}`).text).toBe("1. a *star*, <script>x</script>, [link] and ~~gone~~ file_name _here_")
    expect(rendered(`> ${highlightedMarkdown("# not a heading", stems)}`).text).toBe("# not a heading")
    expect(highlightedMarkdown("Q&A: &amp; stays", stems)).toBe("Q&A: \\&amp; stays")
  })

  it("for any snippet, the quote renders back to its plain text, bold only on the question's words (fast-check)", () => {
    const pieces = fc.constantFrom("*", "**", "_", "`", "[", "](", ")", "<b>", "<", ">", "# ", "- ", "1. ", "!", "&amp;", "&#42;", "\\", "~", "|", " ", "\n", "a", "the", "to", "warranty", "chairs", "x", "http://x.test")
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 40 }), (parts) => {
        const plain = plainTextOf(parts.join(""))
        const { bold, nested, text } = rendered(`> ${highlightedMarkdown(plain, stems)}`)
        expect(text).toBe(plain)
        expect(nested).toEqual([])
        expect(bold.filter((word) => !/^(warranty|chairs)$/i.test(word))).toEqual([])
      }),
      { numRuns: 1_000 }
    )
  })
})

describe("the demo's Agent answering with the builtin model over HTTP", () => {
  let server: TestServer

  beforeAll(async () => {
    server = await startTestServer({ server: { demo: true } })
    const { knowledgebaseId } = server.demo!
    await readySource(server, knowledgebaseId, {
      name: "Staff handbook",
      markdown: true,
      text: [
        "# Staff handbook",
        "",
        "Incidents: report every safety incident **to** the duty manager. Go to the first-aid room and tell the team lead.",
        "",
        "Holidays are agreed with the manager a month ahead; the rota is on the board by the door.",
        ""
      ].join("\n")
    })
  }, 60_000)
  afterAll(() => server?.stop())

  const ask = async (message: string): Promise<string> => {
    const asked = await server.request("POST", `/agents/${server.demo!.agentId}/conversation`, { body: { message } })
    expect(asked.status).toBe(200)
    return asked.body.reply as string
  }

  it("quotes the warranty page cleanly: the page's **2-year warranty** and the highlight do not nest", async () => {
    const reply = await ask("What is the warranty on a chair?")
    expect(reply).toMatch(/\[\d\] Warranty and assembly\n> /)
    expect(reply).toContain("a 2-year **warranty** on its mechanics")
    const bold = expectCleanQuotes(reply)
    expect(new Set(bold.map((word) => word.toLowerCase()))).toEqual(new Set(["warranty", "chair", "chairs"]))
  })

  it("answers the demo's other questions with clean quotes: no stop word bold, nothing nested or left open", async () => {
    for (const question of ["Shipping to Norway?", "How do refunds work?", "Can I pay by invoice?", "How do I report a safety incident to the manager?"]) {
      const reply = await ask(question)
      expect(reply).toMatch(/passages? of the Knowledgebases match/)
      expectCleanQuotes(reply)
      expect(reply).not.toMatch(/\*\*(to|the|a|and|do|i|by)\*\*/i)
    }
  })
})
