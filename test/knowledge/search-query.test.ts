/**
 * The pure helpers of Knowledgebase search (server/knowledge/search/query.ts): the words of a
 * query, the FTS5 expression they make (every word quoted, so no user text is ever FTS5 syntax;
 * checked against a real FTS5 table) and highlighted snippets.
 */
import Database from "better-sqlite3"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { matchExpression, maxQueryTerms, queryTerms, snippetOf } from "../../server/knowledge/search/query.js"

describe("queryTerms", () => {
  it("lower-cases and keeps the distinct words in order of first appearance", () => {
    expect(queryTerms("Refund WINDOW refund Window receipt")).toEqual(["refund", "window", "receipt"])
  })

  it("splits on everything that is not a letter or a digit", () => {
    expect(queryTerms("refund-window, (receipt)! don't e-mail: v2/2026")).toEqual([
      "refund",
      "window",
      "receipt",
      "don",
      "t",
      "e",
      "mail",
      "v2",
      "2026"
    ])
  })

  it("keeps letters and digits of any script, and normalizes compatibility forms (NFKC)", () => {
    expect(queryTerms("Café naïve 東京 Ελλάδα")).toEqual(["café", "naïve", "東京", "ελλάδα"])
    // Full-width letters and digits become their ASCII forms.
    expect(queryTerms("ＲＥＦＵＮＤ １２")).toEqual(["refund", "12"])
    // A decomposed é (e + combining acute) is composed, so it matches the precomposed word.
    expect(queryTerms("cafe\u0301")).toEqual(["café"])
  })

  it("gives no words for a query of only punctuation, symbols or spaces", () => {
    for (const query of ["", "   ", "?!.,;:", "*", "()", '"""', "-- ;", "^", "+-*/=<>", "…", "\t\n"]) {
      expect(queryTerms(query), JSON.stringify(query)).toEqual([])
    }
  })

  it("reads FTS5 operators and syntax as plain words", () => {
    expect(queryTerms('"a" NEAR b*')).toEqual(["a", "near", "b"])
    expect(queryTerms("AND OR NOT")).toEqual(["and", "or", "not"])
    expect(queryTerms("title:refund NEAR(a b, 2) ^start {col}")).toEqual(["title", "refund", "near", "a", "b", "2", "start", "col"])
  })

  it(`keeps at most ${maxQueryTerms} words`, () => {
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`)
    const terms = queryTerms(words.join(" "))
    expect(terms).toHaveLength(maxQueryTerms)
    expect(terms).toEqual(words.slice(0, maxQueryTerms))
    // Repeats do not use up the allowance.
    expect(queryTerms(`${"same ".repeat(100)} other`)).toEqual(["same", "other"])
  })
})

describe("matchExpression", () => {
  it("quotes each word and joins them with OR", () => {
    expect(matchExpression(["refund"])).toBe('"refund"')
    expect(matchExpression(["refund", "window"])).toBe('"refund" OR "window"')
    expect(matchExpression(queryTerms('"a" NEAR b*'))).toBe('"a" OR "near" OR "b"')
    expect(matchExpression(queryTerms("AND OR"))).toBe('"and" OR "or"')
  })

  it("doubles a double quote inside a word, as FTS5 strings require", () => {
    expect(matchExpression(['he"llo'])).toBe('"he""llo"')
    expect(matchExpression(['"'])).toBe('""""')
  })

  it("is empty for no words", () => {
    expect(matchExpression([])).toBe("")
  })

  describe("against a real FTS5 index", () => {
    let db: Database.Database
    beforeAll(() => {
      db = new Database(":memory:")
      db.exec("CREATE VIRTUAL TABLE docs USING fts5(text, tokenize='porter unicode61')")
      const insert = db.prepare("INSERT INTO docs (rowid, text) VALUES (?, ?)")
      insert.run(1, "Customers may ask for a refund within thirty days and keep the receipt.")
      insert.run(2, "Parcels ship within two days; tracking arrives by email.")
      insert.run(3, "Rules AND exceptions OR not: near the title column.")
      insert.run(4, "Refunds were refunded to the card.")
    })
    afterAll(() => db.close())
    const match = (query: string) =>
      (db.prepare("SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs), rowid").all(matchExpression(queryTerms(query))) as Array<{
        rowid: number
      }>).map((row) => row.rowid)

    it("never raises an FTS5 syntax error, whatever the query holds", () => {
      const hostile = [
        '"a" NEAR b*',
        "AND OR",
        "NOT refund",
        "refund AND",
        "OR",
        "title:refund",
        "text:refund",
        "NEAR(refund days, 2)",
        '"unterminated refund',
        "refund -days",
        "{text}: refund",
        "^refund",
        "refund*",
        "'; DROP TABLE docs; --",
        "(refund OR",
        "refund + days",
        "col:",
        "\\u0000 refund",
        "e\u0301 NEAR"
      ]
      for (const query of hostile) expect(() => match(query), query).not.toThrow()
    })

    it("treats operator words as words: `AND OR` finds the passage that holds them", () => {
      expect(match("AND OR")).toContain(3)
      expect(match("near title")).toEqual([3])
      expect(match('"a" NEAR b*')).toEqual(expect.arrayContaining([1, 3]))
    })

    it("finds any of the words, stemmed like the index (refunds finds refund)", () => {
      expect(match("refunds")).toEqual(expect.arrayContaining([1, 4]))
      expect(match("tracking zebra")).toEqual([2])
      expect(match("zebra")).toEqual([])
    })
  })
})

describe("snippetOf", () => {
  it("bolds every matching word of a short text and adds no ellipsis", () => {
    expect(snippetOf("Customers may ask for a refund within thirty days.", ["refund", "days"])).toBe(
      "Customers may ask for a **refund** within thirty **days**."
    )
  })

  it("matches case-insensitively and keeps the text's own case", () => {
    expect(snippetOf("REFUND or Refund or refund", ["refund"])).toBe("**REFUND** or **Refund** or **refund**")
  })

  it("matches word forms by their stem-like prefix, as the index's stemmer does", () => {
    // Terms longer than five characters match by their first length-2 (at least 5) characters.
    expect(snippetOf("We refunded two refunds; the refund policy", ["refunds"])).toBe("We **refunded** two **refunds**; the **refund** policy")
    // Short terms match as a prefix of a word.
    expect(snippetOf("Cats and a cat", ["cat"])).toBe("**Cats** and a **cat**")
  })

  it("bolds word forms the index's Porter stemmer matches even where the query word is not a prefix of them", () => {
    // FTS5 finds "policy" for "policies" and "company" for "companies" (both stem to polici/compani),
    // so the snippet of such a hit should mark them.
    expect(snippetOf("Our policy binds the company.", ["policies", "companies"])).toBe("Our **policy** binds the **company**.")
  })

  it("never bolds a match inside a word", () => {
    expect(snippetOf("concatenate the cat", ["cat"])).toBe("concatenate the **cat**")
    expect(snippetOf("prerefund refund", ["refund"])).toBe("prerefund **refund**")
  })

  it("collapses whitespace and trims", () => {
    expect(snippetOf("  Refund\n\n  within\t thirty   days  ", ["refund"])).toBe("**Refund** within thirty days")
  })

  it("gives the start of the text, unmarked, when no word matches", () => {
    expect(snippetOf("Parcels ship within two days.", ["refund"])).toBe("Parcels ship within two days.")
    expect(snippetOf("Parcels ship within two days.", [])).toBe("Parcels ship within two days.")
  })

  it("cuts a long text around the first match, at word boundaries, with ellipses where cut", () => {
    const before = Array.from({ length: 60 }, (_, i) => `lead${i}`).join(" ")
    const after = Array.from({ length: 60 }, (_, i) => `tail${i}`).join(" ")
    const text = `${before} the refund rule ${after}`
    const snippet = snippetOf(text, ["refund"])
    expect(snippet.startsWith("…")).toBe(true)
    expect(snippet.endsWith("…")).toBe(true)
    expect(snippet).toContain("the **refund** rule")
    const inner = snippet.slice(1, -1).replaceAll("**", "")
    expect(inner.length).toBeLessThanOrEqual(240)
    // Whole words only: the excerpt is a run of the text's words.
    expect(text).toContain(inner)
    expect(inner.startsWith("lead")).toBe(true)
    expect(/^lead\d+ /.test(inner)).toBe(true)
    expect(/ tail\d+$/.test(inner)).toBe(true)
    // Some context is kept before the match.
    expect(inner.indexOf("refund")).toBeGreaterThan(20)
  })

  it("starts at the beginning (no leading ellipsis) when the match is near the start of a long text", () => {
    const text = `Refund first. ${"filler ".repeat(100)}`
    const snippet = snippetOf(text, ["refund"])
    expect(snippet.startsWith("**Refund** first.")).toBe(true)
    expect(snippet.endsWith("…")).toBe(true)
  })

  it("has no trailing ellipsis when the match is near the end of a long text", () => {
    const text = `${"filler ".repeat(100)}the last word is refund`
    const snippet = snippetOf(text, ["refund"])
    expect(snippet.startsWith("…")).toBe(true)
    expect(snippet.endsWith("the last word is **refund**")).toBe(true)
  })

  it("never bolds a stop word, and never nests a highlight in the text's own bold", () => {
    expect(snippetOf("Ship it to the duty manager", ["ship", "to", "the"])).toBe("**Ship** it to the duty manager")
    expect(snippetOf("Every chair has a **2-year warranty** from delivery.", ["warranty", "on", "a", "chair"])).toBe(
      "Every **chair** has a 2-year **warranty** from delivery."
    )
  })

  it("is safe with terms holding regular-expression characters", () => {
    expect(() => snippetOf("c++ and a.b (x)", ["c++", "a.b", "(x)", "[", "\\"])).not.toThrow()
    expect(snippetOf("abc x.y", ["x.y"])).toBe("abc **x**.**y**")
  })

  it("handles letters of any script", () => {
    expect(snippetOf("Über die Rückerstattung: café ou thé", ["rückerstattung", "café"])).toBe(
      "Über die **Rückerstattung**: **café** ou thé"
    )
  })
})
