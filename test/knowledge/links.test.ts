/**
 * Page and file links inside markdown: which `svcpage://` and `svcsource://` mentions count (real
 * CommonMark links, references, autolinks and images; never code or bare text), id validation and
 * normalization, deduplication and order, resolution against the Knowledgebase, and the schemas.
 */
import { Either, JSONSchema, Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import {
  extractLinks,
  type KnownTargets,
  Links,
  PageLink,
  resolveLinks,
  SourceLink,
  UnresolvedLink
} from "../../server/knowledge/pages/links.js"

const P1 = "11111111-1111-4111-8111-111111111111"
const P2 = "22222222-2222-4222-8222-222222222222"
const P3 = "33333333-3333-4333-8333-333333333333"
const S1 = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
const S2 = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
const MIXED = "AbCdEf01-2345-4789-aBcD-0123456789aB"

const none = { pages: [], sources: [], invalid: [] }

describe("extractLinks: what counts as a mention", () => {
  it("finds inline links to pages and sources", () => {
    expect(extractLinks(`See [Refunds](svcpage://${P1}) and [the sheet](svcsource://${S1}).`)).toEqual({
      pages: [P1],
      sources: [S1],
      invalid: []
    })
  })

  it("finds inline links with a title and with an angle-bracket destination", () => {
    const md = `[a](svcpage://${P1} "Refunds") [b](<svcpage://${P2}>)`
    expect(extractLinks(md).pages).toEqual([P1, P2])
  })

  it("finds full, collapsed and shortcut reference links through their definitions", () => {
    const md = [
      "[Refunds][r1], [Pricing][] and [sheet].",
      "",
      `[r1]: svcpage://${P1}`,
      `[pricing]: svcpage://${P2} "Pricing"`,
      `[Sheet]: svcsource://${S1}`
    ].join("\n")
    expect(extractLinks(md)).toEqual({ pages: [P1, P2], sources: [S1], invalid: [] })
  })

  it("orders reference links by where they are used, wherever the definition stands", () => {
    const md = [`[p2]: svcpage://${P2}`, "", `First [one](svcpage://${P1}), then [two][p2].`].join("\n")
    expect(extractLinks(md).pages).toEqual([P1, P2])
  })

  it("ignores definitions nobody references", () => {
    expect(extractLinks(`Nothing here.\n\n[unused]: svcpage://${P1}\n`)).toEqual(none)
  })

  it("takes the first of duplicate definitions, as CommonMark does", () => {
    const md = `[x][ref]\n\n[ref]: svcpage://${P1}\n[REF]: svcpage://${P2}\n`
    expect(extractLinks(md).pages).toEqual([P1])
  })

  it("ignores a reference whose definition is missing (it is plain text)", () => {
    expect(extractLinks(`[x][missing]\n\n[other]: svcpage://${P1}\n`)).toEqual(none)
  })

  it("finds autolinks", () => {
    expect(extractLinks(`Go to <svcpage://${P1}> or <svcsource://${S1}>.`)).toEqual({
      pages: [P1],
      sources: [S1],
      invalid: []
    })
  })

  it("counts an image as a mention of what it shows, inline or by reference", () => {
    const md = `![diagram](svcsource://${S1}) ![chart][c] ![odd](svcpage://${P1})\n\n[c]: svcsource://${S2}\n`
    expect(extractLinks(md)).toEqual({ pages: [P1], sources: [S1, S2], invalid: [] })
  })

  it("counts both a linked image and the link around it", () => {
    expect(extractLinks(`[![thumb](svcsource://${S1})](svcpage://${P1})`)).toEqual({
      pages: [P1],
      sources: [S1],
      invalid: []
    })
  })

  it("finds links inside lists, block quotes, headings, emphasis and tables", () => {
    const md = [
      `# About [p1](svcpage://${P1})`,
      "",
      `- item [p2](svcpage://${P2})`,
      `  1. nested *[s1](svcsource://${S1})*`,
      "",
      `> quoted **[p3](svcpage://${P3})**`,
      "",
      "| Page | File |",
      "|---|---|",
      `| [p1 again](svcpage://${P1}) | [s2](svcsource://${S2}) |`
    ].join("\n")
    expect(extractLinks(md)).toEqual({ pages: [P1, P2, P3], sources: [S1, S2], invalid: [] })
  })

  it("ignores bare addresses that are not written as links", () => {
    expect(extractLinks(`See svcpage://${P1} and svcsource://${S1} for details.`)).toEqual(none)
  })

  it("ignores raw HTML anchors and link text that merely shows an address", () => {
    const md = `<a href="svcpage://${P1}">x</a>\n\n[svcpage://${P2}](https://example.com)`
    expect(extractLinks(md)).toEqual(none)
  })

  it("ignores other spellings and other schemes", () => {
    const md = `[a](svcpage:${P1}) [b](svcpage:/${P1}) [c](https://${P1}) [d](svcpages://${P1}) [e](page://${P1})`
    expect(extractLinks(md)).toEqual(none)
  })
})

describe("extractLinks: code is never a link", () => {
  it("ignores links in fenced code blocks (backticks and tildes)", () => {
    const md = ["```md", `[a](svcpage://${P1}) <svcpage://${P2}>`, "```", "", "~~~", `![i](svcsource://${S1})`, "~~~"].join("\n")
    expect(extractLinks(md)).toEqual(none)
  })

  it("ignores links in an unterminated fence, which runs to the end of the document", () => {
    expect(extractLinks(`\`\`\`\n[a](svcpage://${P1})\n`)).toEqual(none)
  })

  it("ignores links in indented code blocks", () => {
    expect(extractLinks(`Text:\n\n    [a](svcpage://${P1})\n    <svcsource://${S1}>\n`)).toEqual(none)
  })

  it("ignores links in inline code but finds the real link beside it", () => {
    const md = `Write \`[Title](svcpage://${P1})\` or \`\`<svcsource://${S1}>\`\`, like [this](svcpage://${P2}).`
    expect(extractLinks(md)).toEqual({ pages: [P2], sources: [], invalid: [] })
  })

  it("ignores definitions inside code blocks", () => {
    const md = `[x][ref]\n\n\`\`\`\n[ref]: svcpage://${P1}\n\`\`\`\n`
    expect(extractLinks(md)).toEqual(none)
  })
})

describe("extractLinks: ids", () => {
  it("accepts ids in any case and in an upper-case scheme, normalizing the id to lower case", () => {
    const md = `[a](svcpage://${MIXED}) [b](SVCPAGE://${P1.toUpperCase()}) <SvcSource://${S1.toUpperCase()}>`
    expect(extractLinks(md)).toEqual({ pages: [MIXED.toLowerCase(), P1], sources: [S1], invalid: [] })
  })

  it("deduplicates ids across case and link styles", () => {
    const md = `[a](svcpage://${P1}) <svcpage://${P1.toUpperCase()}> [c][r] [d](svcpage://${P1})\n\n[r]: svcpage://${P1}\n`
    expect(extractLinks(md).pages).toEqual([P1])
  })

  it("keeps the order of first occurrence", () => {
    const md = `[3](svcpage://${P3}) [1](svcpage://${P1}) [3](svcpage://${P3}) [2](svcpage://${P2}) [1](svcpage://${P1})`
    expect(extractLinks(md).pages).toEqual([P3, P1, P2])
  })

  it("keeps page and source ids apart even when the same UUID is used for both", () => {
    expect(extractLinks(`[a](svcpage://${P1}) [b](svcsource://${P1})`)).toEqual({
      pages: [P1],
      sources: [P1],
      invalid: []
    })
  })

  it("reports malformed ids as invalid, with their raw text", () => {
    const md = [
      "[a](svcpage://not-a-uuid)",
      `[b](svcsource://${P1.slice(0, -1)})`,
      `[c](svcpage://${P1}0)`,
      `[d](svcpage://{${P1}})`,
      "[e](svcpage://)",
      `[f](svcpage://${P1.replaceAll("-", "")})`,
      `[g](svcpage://${P1.slice(0, -1)}g)`
    ].join(" ")
    expect(extractLinks(md)).toEqual({
      pages: [],
      sources: [],
      invalid: [
        { kind: "page", id: "not-a-uuid" },
        { kind: "source", id: P1.slice(0, -1) },
        { kind: "page", id: `${P1}0` },
        { kind: "page", id: `{${P1}}` },
        { kind: "page", id: "" },
        { kind: "page", id: P1.replaceAll("-", "") },
        { kind: "page", id: `${P1.slice(0, -1)}g` }
      ]
    })
  })

  it("reports an id with anything after it as invalid, a trailing slash included", () => {
    const md = [
      `[a](svcpage://${P1}/)`,
      `[b](svcpage://${P1}?v=2)`,
      `[c](svcpage://${P1}#intro)`,
      `[d](svcsource://${S1}/page/2)`,
      `[e](<svcpage://${P1} x>)`
    ].join(" ")
    expect(extractLinks(md)).toEqual({
      pages: [],
      sources: [],
      invalid: [
        { kind: "page", id: `${P1}/` },
        { kind: "page", id: `${P1}?v=2` },
        { kind: "page", id: `${P1}#intro` },
        { kind: "source", id: `${S1}/page/2` },
        { kind: "page", id: `${P1} x` }
      ]
    })
  })

  it("keeps invalid mentions raw (no case folding), deduplicated per kind, in document order", () => {
    const md = "[a](svcsource://Bad) [b](svcpage://Bad) [c](svcpage://bad) [d](svcpage://Bad) <svcsource://Bad>"
    expect(extractLinks(md).invalid).toEqual([
      { kind: "source", id: "Bad" },
      { kind: "page", id: "Bad" },
      { kind: "page", id: "bad" }
    ])
  })

  it("reads the destination as CommonMark does: escapes and character references are decoded", () => {
    const [head, tail] = [P1.slice(0, 1), P1.slice(1)]
    const md = `[a](svcpage://&#x${head.charCodeAt(0).toString(16)};${tail}) [b](svcsource://${S1.slice(0, 8)}\\-${S1.slice(9)})`
    expect(extractLinks(md)).toEqual({ pages: [P1], sources: [S1], invalid: [] })
  })

  it("finds a scheme spelled with character references in a link destination, not in an autolink", () => {
    expect(extractLinks(`[a](&#x73;vcpage&colon;//${P1}) <&#83;VCSOURCE://${S1}>`)).toEqual({
      pages: [P1],
      sources: [],
      invalid: []
    })
  })

  it("returns nothing for an empty or link-free document", () => {
    expect(extractLinks("")).toEqual(none)
    expect(extractLinks("# Title\n\nJust [a link](https://example.com) and text.\n")).toEqual(none)
  })
})

describe("extractLinks: a large document", () => {
  it("parses about 200 KB with thousands of links", () => {
    const uuid = (n: number) => `${n.toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`
    const lines: Array<string> = []
    for (let i = 0; i < 1_600; i += 1) {
      lines.push(`- Item ${i}: [page ${i}](svcpage://${uuid(i % 1500)}) and <svcsource://${uuid(i % 700)}>.`)
      if (i % 10 === 0) lines.push(`  Written as \`[code](svcpage://${uuid(999_999)})\`.`)
      if (i % 50 === 0) lines.push("", "```", `[fenced](svcpage://${uuid(888_888)})`, "```", "")
    }
    const md = lines.join("\n")
    expect(md.length).toBeGreaterThan(190_000)
    const found = extractLinks(md)
    expect(found.pages).toHaveLength(1500)
    expect(found.sources).toHaveLength(700)
    expect(found.pages.slice(0, 3)).toEqual([uuid(0), uuid(1), uuid(2)])
    expect(found.pages).not.toContain(uuid(999_999))
    expect(found.pages).not.toContain(uuid(888_888))
    expect(found.invalid).toEqual([])
  })
})

describe("resolveLinks", () => {
  const known: KnownTargets = {
    pages: new Map([
      [P1, "Refunds"],
      [P2, "Pricing"]
    ]),
    sources: new Map([[S1, "sheet.csv"]])
  }

  it("resolves known ids with their title or name", () => {
    expect(resolveLinks({ pages: [P1, P2], sources: [S1], invalid: [] }, known)).toEqual({
      pages: [
        { id: P1, title: "Refunds" },
        { id: P2, title: "Pricing" }
      ],
      sources: [{ id: S1, name: "sheet.csv" }],
      unresolved: []
    })
  })

  it("reports unknown (foreign or stale) ids and invalid mentions as unresolved: pages, sources, then invalid", () => {
    const found = {
      pages: [P3, P1],
      sources: [S2, S1],
      invalid: [
        { kind: "source", id: "nope" },
        { kind: "page", id: `${P1}/` }
      ]
    } as const
    expect(resolveLinks(found, known)).toEqual({
      pages: [{ id: P1, title: "Refunds" }],
      sources: [{ id: S1, name: "sheet.csv" }],
      unresolved: [
        { kind: "page", id: P3 },
        { kind: "source", id: S2 },
        { kind: "source", id: "nope" },
        { kind: "page", id: `${P1}/` }
      ]
    })
  })

  it("does not resolve a page id as a source or the other way round", () => {
    expect(resolveLinks({ pages: [S1], sources: [P1], invalid: [] }, known)).toEqual({
      pages: [],
      sources: [],
      unresolved: [
        { kind: "page", id: S1 },
        { kind: "source", id: P1 }
      ]
    })
  })

  it("keeps mention order, not the order of the known maps", () => {
    const md = `[b](svcpage://${P2}) [x](svcpage://${P3}) [a](svcpage://${MIXED.toUpperCase()}) [c](svcpage://${P1})`
    const pages = new Map([
      [P1, "One"],
      [P2, "Two"],
      [MIXED.toLowerCase(), "Mixed"]
    ])
    const result = resolveLinks(extractLinks(md), { pages, sources: new Map() })
    expect(result.pages.map((p) => p.title)).toEqual(["Two", "Mixed", "One"])
    expect(result.unresolved).toEqual([{ kind: "page", id: P3 }])
  })

  it("resolves everything as unresolved against an empty Knowledgebase, end to end", () => {
    const md = `[a](svcpage://${P1}) ![b](svcsource://${S1}) [c](svcpage://oops)`
    expect(resolveLinks(extractLinks(md), { pages: new Map(), sources: new Map() })).toEqual({
      pages: [],
      sources: [],
      unresolved: [
        { kind: "page", id: P1 },
        { kind: "source", id: S1 },
        { kind: "page", id: "oops" }
      ]
    })
  })
})

describe("schemas", () => {
  it("encode what resolveLinks returns, and the plain types match the schema types", () => {
    const links = resolveLinks(extractLinks(`[a](svcpage://${P1}) [b](svcsource://${S1}) [c](svcpage://x)`), {
      pages: new Map([[P1, "Refunds"]]),
      sources: new Map([[S1, "sheet.csv"]])
    })
    expectTypeOf(links).toExtend<typeof Links.Type>()
    expectTypeOf<typeof Links.Type>().toExtend<{
      readonly pages: ReadonlyArray<PageLink>
      readonly sources: ReadonlyArray<SourceLink>
      readonly unresolved: ReadonlyArray<UnresolvedLink>
    }>()
    expect(Schema.encodeEither(Links)(links)).toEqual(Either.right(links))
    expect(Schema.decodeUnknownEither(Links)(JSON.parse(JSON.stringify(links)))).toEqual(Either.right(links))
  })

  it("reject a resolved link whose id is not a UUID but accept any unresolved id", () => {
    expect(Either.isLeft(Schema.decodeUnknownEither(PageLink)({ id: "x", title: "t" }))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(SourceLink)({ id: "x", name: "n" }))).toBe(true)
    expect(Either.isRight(Schema.decodeUnknownEither(UnresolvedLink)({ kind: "source", id: "x/" }))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(UnresolvedLink)({ kind: "file", id: "x" }))).toBe(true)
  })

  it("carry identifiers and valid examples", () => {
    for (const [schema, identifier] of [
      [PageLink, "PageLink"],
      [SourceLink, "SourceLink"],
      [UnresolvedLink, "UnresolvedLink"],
      [Links, "Links"]
    ] as const) {
      const jsonSchema = JSONSchema.make(schema as Schema.Schema<unknown, unknown>) as {
        $ref?: string
        $defs?: Record<string, unknown>
      }
      expect(jsonSchema.$ref).toBe(`#/$defs/${identifier}`)
      const definition = jsonSchema.$defs?.[identifier] as { examples?: ReadonlyArray<unknown> } | undefined
      expect(definition?.examples?.length).toBeGreaterThan(0)
      for (const example of definition?.examples ?? []) {
        expect(Either.isRight(Schema.decodeUnknownEither(schema as Schema.Schema<unknown, unknown>)(example))).toBe(true)
      }
    }
  })
})
