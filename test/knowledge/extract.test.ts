/**
 * Text extraction (server/knowledge/sources/extract.ts): every type end to end from the files in
 * `fixtures/` (exact text, section labels, offsets that slice back to the right text), the failure
 * paths (corrupt, encrypted and text-less PDFs, text that is not UTF-8, CSV syntax errors, the size
 * cap), CSV and HTML details on small inline inputs, and `detectType`.
 */
import { readFileSync } from "node:fs"
import { Effect } from "effect"
import { PDFDocument, rgb } from "pdf-lib"
import { describe, expect, it, vi } from "vitest"
import { buildPdfFixtures, handbookPages } from "../../scripts/make-fixtures.js"
import {
  csvRowsPerSection,
  detectType,
  type DocumentType,
  type ExtractedDocument,
  ExtractionFailed,
  type ExtractionFailureReason,
  extractText,
  maxExtractedChars
} from "../../server/knowledge/sources/extract.js"

const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(`../../fixtures/${name}`, import.meta.url)))
const fixtureText = (name: string): string => readFileSync(new URL(`../../fixtures/${name}`, import.meta.url), "utf8")
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)
const bytes = (...values: Array<number>): Uint8Array => Uint8Array.from(values)

/** The failure `promise` rejects with, checked to be an {@link ExtractionFailed} of that reason and type. */
const failure = async (
  promise: Promise<unknown>,
  reason: ExtractionFailureReason,
  type: DocumentType
): Promise<ExtractionFailed> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e
  )
  expect(error).toBeInstanceOf(ExtractionFailed)
  expect(error).toBeInstanceOf(Error)
  const failed = error as ExtractionFailed
  expect(failed._tag).toBe("ExtractionFailed")
  expect(failed.reason).toBe(reason)
  expect(failed.type).toBe(type)
  return failed
}

/** Every section slices back to `text` in order without overlap, and never starts or ends on whitespace. */
const expectWellFormedSections = (document: ExtractedDocument): void => {
  let previousEnd = 0
  for (const section of document.sections) {
    expect(section.start).toBeGreaterThanOrEqual(previousEnd)
    expect(section.end).toBeGreaterThan(section.start)
    expect(section.end).toBeLessThanOrEqual(document.text.length)
    const slice = document.text.slice(section.start, section.end)
    expect(slice).toBe(slice.trim())
    previousEnd = section.end
  }
}

const sliceOf = (document: ExtractedDocument, label: string): string => {
  const section = document.sections.find((s) => s.label === label)
  if (section === undefined) throw new Error(`no section ${label}`)
  return document.text.slice(section.start, section.end)
}

describe("PDF", () => {
  it("the committed PDF fixtures are exactly what scripts/make-fixtures.ts builds", async () => {
    const built = await buildPdfFixtures()
    expect(Object.keys(built).sort()).toEqual(["broken.pdf", "demo/price-list.pdf", "encrypted.pdf", "handbook.pdf", "scanned.pdf"])
    for (const [name, content] of Object.entries(built)) {
      expect(Buffer.from(fixture(name)).equals(Buffer.from(content)), name).toBe(true)
    }
  })

  it("extracts handbook.pdf page by page, with a `page N` section per page", async () => {
    const document = await extractText({ bytes: fixture("handbook.pdf"), type: "pdf", name: "handbook.pdf" })
    expect(document.sections.map((s) => s.label)).toEqual(["page 1", "page 2", "page 3"])
    expectWellFormedSections(document)
    // Pages are joined with one blank line, and the sections cover everything else.
    const [p1, p2, p3] = document.sections
    expect(document.text.slice(p1!.end, p2!.start)).toBe("\n\n")
    expect(document.text.slice(p2!.end, p3!.start)).toBe("\n\n")
    expect(p1!.start).toBe(0)
    expect(p3!.end).toBe(document.text.length)
    // Word for word what was drawn on each page, in order.
    handbookPages.forEach((page, i) => {
      const slice = sliceOf(document, `page ${i + 1}`)
      expect(slice.replace(/\s+/g, " ")).toBe([page.heading, ...page.paragraphs].join(" "))
      expect(slice.startsWith(`${page.heading}\n\n`)).toBe(true)
    })
    // Lines stay lines, paragraphs (a gap of about two lines) become blank lines.
    expect(sliceOf(document, "page 1")).toBe(
      "Acme Field Handbook\n\n" +
        "Welcome to Acme. This handbook explains how field teams plan visits, report incidents\n" +
        "and claim expenses. Read it once before your first assignment and keep it nearby.\n\n" +
        "Meetings with customers at a café are fine; the €25 meal allowance covers one drink\n" +
        "and a light meal for each person attending."
    )
    expect(sliceOf(document, "page 2")).toContain("Submit every expense claim within 30 days of the purchase.")
    expect(sliceOf(document, "page 3")).toContain("Report every safety incident to the duty manager within 24 hours")
    expect(sliceOf(document, "page 3").endsWith("Keep a copy for your own records.")).toBe(true)
    expect(document.text).not.toMatch(/[\r\u0000]/)
  })

  it("never touches the network (no fetch), fonts and CMaps come from node_modules", async () => {
    const fetchSpy = vi.spyOn(globalThis, "fetch").mockRejectedValue(new Error("no network in extraction"))
    try {
      const document = await extractText({ bytes: fixture("handbook.pdf"), type: "pdf" })
      expect(document.sections).toHaveLength(3)
      expect(fetchSpy).not.toHaveBeenCalled()
    } finally {
      fetchSpy.mockRestore()
    }
  })

  it("leaves the caller's bytes untouched and gives the same result for concurrent extractions", async () => {
    const input = fixture("handbook.pdf")
    const copy = input.slice()
    const results = await Promise.all(Array.from({ length: 4 }, () => extractText({ bytes: input, type: "pdf" })))
    expect(input.byteLength).toBe(copy.byteLength)
    expect(Buffer.from(input).equals(Buffer.from(copy))).toBe(true)
    for (const result of results) expect(result).toEqual(results[0])
  })

  it("reads a PDF that is a view into a larger buffer", async () => {
    const pdf = fixture("handbook.pdf")
    const padded = new Uint8Array(pdf.length + 20)
    padded.set(pdf, 10)
    const document = await extractText({ bytes: padded.subarray(10, 10 + pdf.length), type: "pdf" })
    expect(document.sections).toHaveLength(3)
  })

  it("skips pages without text but keeps the page numbers of the others", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false })
    doc.addPage([300, 300])
    doc.addPage([300, 300]).drawText("Only the second page has words.", { x: 20, y: 150, size: 12 })
    doc.addPage([300, 300]).drawRectangle({ x: 10, y: 10, width: 50, height: 50, color: rgb(0, 0, 0) })
    const document = await extractText({ bytes: await doc.save(), type: "pdf" })
    expect(document).toEqual({
      text: "Only the second page has words.",
      sections: [{ label: "page 2", start: 0, end: 31 }]
    })
  })

  it("fails with no_text on a PDF without extractable text (the scanned.pdf fixture and a blank page)", async () => {
    const scanned = await failure(extractText({ bytes: fixture("scanned.pdf"), type: "pdf" }), "no_text", "pdf")
    expect(scanned.message).toContain("the PDF has no extractable text (scanned images?)")
    const blank = await PDFDocument.create()
    blank.addPage()
    await failure(extractText({ bytes: await blank.save(), type: "pdf" }), "no_text", "pdf")
  })

  it("fails with encrypted_pdf on a password-protected PDF", async () => {
    const error = await failure(extractText({ bytes: fixture("encrypted.pdf"), type: "pdf" }), "encrypted_pdf", "pdf")
    expect(error.message).toBe("the PDF is encrypted (password-protected); upload a copy without a password")
  })

  it("fails with invalid_pdf on a truncated PDF, on bytes that are not a PDF and on an empty file", async () => {
    const broken = await failure(extractText({ bytes: fixture("broken.pdf"), type: "pdf" }), "invalid_pdf", "pdf")
    expect(broken.message).toMatch(/^the PDF is corrupt or truncated and could not be read \(.+\)$/)
    await failure(extractText({ bytes: utf8("just some text, not a PDF"), type: "pdf" }), "invalid_pdf", "pdf")
    const empty = await failure(extractText({ bytes: new Uint8Array(0), type: "pdf" }), "invalid_pdf", "pdf")
    expect(empty.message).toBe("the PDF is empty (0 bytes)")
  })

  it("fails with too_large past the cap", async () => {
    const error = await failure(
      extractText({ bytes: fixture("handbook.pdf"), type: "pdf" }, { maxChars: 400 }),
      "too_large",
      "pdf"
    )
    expect(error.message).toBe("the extracted text is longer than the limit of 400 characters")
  })

  it("is an Effect tagged error: catchTag sees it after tryPromise", async () => {
    const program = Effect.tryPromise({
      try: () => extractText({ bytes: fixture("scanned.pdf"), type: "pdf" }),
      catch: (error) => error as ExtractionFailed
    }).pipe(
      Effect.map(() => "extracted"),
      Effect.catchTag("ExtractionFailed", (error) => Effect.succeed(`failed: ${error.reason}`))
    )
    expect(await Effect.runPromise(program)).toBe("failed: no_text")
  })
})

describe("CSV", () => {
  it("turns customers.csv (BOM, CRLF, quoted commas and quotes, a line break in a value) into one readable line per row", async () => {
    const document = await extractText({ bytes: fixture("customers.csv"), type: "csv", name: "customers.csv" })
    expect(document.sections.map((s) => s.label)).toEqual(["rows 1–20", "rows 21–30"])
    expectWellFormedSections(document)
    const [first, second] = document.sections
    expect(first!.start).toBe(0)
    expect(document.text.slice(first!.end, second!.start)).toBe("\n\n")
    expect(second!.end).toBe(document.text.length)

    const block1 = sliceOf(document, "rows 1–20").split("\n")
    const block2 = sliceOf(document, "rows 21–30").split("\n")
    expect(block1).toHaveLength(csvRowsPerSection)
    expect(block2).toHaveLength(10)
    expect(block1[0]).toBe(
      "id: 1; name: Ada Lovelace; company: Analytical Engines, Ltd.; city: London; notes: Prefers email; renewal due in March; plan: Pro"
    )
    expect(block1[1]).toBe(
      'id: 2; name: Grace Hopper; company: Navy Compilers; city: Arlington; notes: Asked about "bulk" pricing; plan: Enterprise'
    )
    // An empty value is left out.
    expect(block1[2]).toBe("id: 3; name: Alan Turing; company: Bletchley Works; city: Milton Keynes; plan: Free")
    // A line break inside a quoted value becomes a space.
    expect(block1[12]).toBe(
      "id: 13; name: Ken Thompson; company: Unix & Go; city: Berkeley; notes: Multi-line note: first call went well; plan: Enterprise"
    )
    expect(block1[19]).toBe("id: 20; name: Claude Shannon; company: Information Theory Inc.; city: Ann Arbor; plan: Pro")
    expect(block2[0]).toBe("id: 21; name: Niklaus Wirth; company: Pascal & Modula; city: Zürich; notes: Invoices in CHF; plan: Pro")
    expect(block2[9]).toBe("id: 30; name: Yukihiro Matsumoto; company: Ruby Gems KK; city: Matsue; notes: 請求書は日本語で; plan: Pro")
    expect(document.text).not.toMatch(/[\r\uFEFF]/)
  })

  it("names fields past the header `column N`, leaves out missing ones, and names unnamed header cells", async () => {
    const csv = "name,,city\nAda,x,London,extra,more\nGrace\n,,\nLinus,,Portland\n"
    expect(await extractText({ bytes: utf8(csv), type: "csv" })).toEqual({
      text: "name: Ada; column 2: x; city: London; column 4: extra; column 5: more\nname: Grace\nname: Linus; city: Portland",
      sections: [{ label: "rows 1–3", start: 0, end: 109 }]
    })
  })

  it("labels a last block of one row `row N`, and skips all-empty rows without counting them", async () => {
    const rows = Array.from({ length: 21 }, (_, i) => `${i + 1},item ${i + 1}`)
    const csv = ["n,label", ...rows.slice(0, 10), ",", " , ", ...rows.slice(10)].join("\r\n")
    const document = await extractText({ bytes: utf8(csv), type: "csv" })
    expect(document.sections.map((s) => s.label)).toEqual(["rows 1–20", "row 21"])
    expect(sliceOf(document, "row 21")).toBe("n: 21; label: item 21")
    expectWellFormedSections(document)
  })

  it("reads tab-separated files (by name, or sniffed from the header line) and semicolon-separated ones", async () => {
    const tsv = "name\tnote\nAda\tcomma, inside\n"
    const expected = "name: Ada; note: comma, inside"
    expect((await extractText({ bytes: utf8(tsv), type: "csv", name: "people.tsv" })).text).toBe(expected)
    expect((await extractText({ bytes: utf8(tsv), type: "csv" })).text).toBe(expected)
    const semicolons = 'name;note\nAda;"semi; colon"\n'
    expect((await extractText({ bytes: utf8(semicolons), type: "csv" })).text).toBe("name: Ada; note: semi; colon")
  })

  it("accepts lone CR line endings and a stray quote inside an unquoted value", async () => {
    const document = await extractText({ bytes: utf8('a,b\r1,2 "inch"\r3,4'), type: "csv" })
    expect(document.text).toBe('a: 1; b: 2 "inch"\na: 3; b: 4')
  })

  it("gives empty text for a header without rows and for an empty file", async () => {
    expect(await extractText({ bytes: utf8("a,b,c\r\n"), type: "csv" })).toEqual({ text: "", sections: [] })
    expect(await extractText({ bytes: new Uint8Array(0), type: "csv" })).toEqual({ text: "", sections: [] })
  })

  it("fails with invalid_csv on an unclosed quote and invalid_text on bytes that are not UTF-8", async () => {
    const unclosed = await failure(extractText({ bytes: utf8('a,b\n1,"never closed\n'), type: "csv" }), "invalid_csv", "csv")
    expect(unclosed.message).toMatch(/^the CSV could not be parsed: /)
    await failure(extractText({ bytes: bytes(0x61, 0x2c, 0x62, 0x0a, 0xff, 0x2c, 0x32), type: "csv" }), "invalid_text", "csv")
  })

  it("fails with too_large past the cap", async () => {
    await failure(extractText({ bytes: fixture("customers.csv"), type: "csv" }, { maxChars: 1000 }), "too_large", "csv")
  })
})

describe("TXT and MD", () => {
  it("keeps notes.txt (written with CRLF line ends) as is apart from CRLF → LF", async () => {
    const raw = fixtureText("notes.txt")
    const document = await extractText({ bytes: fixture("notes.txt"), type: "txt" })
    expect(document).toEqual({ text: raw.replace(/\r\n/g, "\n"), sections: [] })
    expect(document.text.startsWith("Support rota notes — week 14\n\nMonday: the import queue stalled")).toBe(true)
    expect(document.text).toContain("emoji 🙂 and CJK text (日本語のテキスト)")
  })

  it("keeps guide.md, markdown syntax included, byte for byte", async () => {
    const document = await extractText({ bytes: fixture("guide.md"), type: "md", name: "guide.md" })
    expect(document.text).toBe(fixtureText("guide.md"))
    expect(document.text).toContain("## Uploading documents\n\n1. Open the Knowledgebase and choose **Upload**.")
    expect(document.text).toContain("[public link](https://example.com/docs/links)")
    expect(document.sections).toEqual([])
  })

  it("drops a BOM, turns CRLF and lone CR into LF and composes to NFC", async () => {
    const input = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8("one\r\ntwo\rthree\ncafe\u0301")])
    for (const type of ["txt", "md"] as const) {
      expect(await extractText({ bytes: input, type })).toEqual({ text: "one\ntwo\nthree\ncafé", sections: [] })
    }
  })

  it("fails with invalid_text on bytes that are not UTF-8, saying which byte", async () => {
    const cases: Array<[Uint8Array, string]> = [
      [bytes(0x61, 0x62, 0x63, 0xff, 0x64), "invalid byte 0xFF at offset 3"],
      [bytes(0x61, 0xc0, 0x80), "invalid byte 0xC0 at offset 1"], // overlong NUL
      [bytes(0xed, 0xa0, 0x80), "invalid byte 0xED at offset 0"], // a UTF-16 surrogate
      [bytes(0x61, 0xe2, 0x82), "invalid byte 0xE2 at offset 1"], // cut off mid-character
      [bytes(0xf4, 0x90, 0x80, 0x80), "invalid byte 0xF4 at offset 0"], // past U+10FFFF
      [new Uint8Array([0xff, 0xfe, ...utf8("hi")]), "invalid byte 0xFF at offset 0"] // UTF-16 BOM
    ]
    for (const [input, where] of cases) {
      const error = await failure(extractText({ bytes: input, type: "txt" }), "invalid_text", "txt")
      expect(error.message).toBe(`the file is not valid UTF-8 text (${where})`)
    }
    await failure(extractText({ bytes: bytes(0x23, 0x20, 0xfe), type: "md" }), "invalid_text", "md")
  })

  it("fails with invalid_text on NUL characters (binary files, UTF-16 without a BOM)", async () => {
    const error = await failure(extractText({ bytes: bytes(0x68, 0x00, 0x69, 0x00), type: "txt" }), "invalid_text", "txt")
    expect(error.message).toBe(
      "the file is not text: it contains a NUL character at character 1 (a binary file, or UTF-16 text?)"
    )
  })

  it("accepts text exactly at the default cap of 20 million characters and fails one past it", async () => {
    expect(maxExtractedChars).toBe(20_000_000)
    const atCap = new Uint8Array(maxExtractedChars).fill(0x61)
    expect((await extractText({ bytes: atCap, type: "txt" })).text.length).toBe(maxExtractedChars)
    const overCap = new Uint8Array(maxExtractedChars + 1).fill(0x61)
    const error = await failure(extractText({ bytes: overCap, type: "txt" }), "too_large", "txt")
    expect(error.message).toBe("the extracted text is longer than the limit of 20,000,000 characters")
  })

  it("counts the cap after normalization (CRLF counts as one character)", async () => {
    const input = utf8("ab\r\ncd")
    expect((await extractText({ bytes: input, type: "md" }, { maxChars: 5 })).text).toBe("ab\ncd")
    await failure(extractText({ bytes: input, type: "md" }, { maxChars: 4 }), "too_large", "md")
  })
})

describe("HTML", () => {
  it("turns page.html into plain text: title, link text without addresses, no images, scripts or styles", async () => {
    const document = await extractText({ bytes: fixture("page.html"), type: "html", name: "page.html" })
    expect(document.sections).toEqual([])
    expect(document.text).toBe(
      [
        "Acme Status & Uptime",
        "",
        "Home Status",
        "",
        "Service status",
        "",
        "All systems are operational. See the incident history for past outages.",
        "",
        "Maintenance windows",
        "",
        "Planned maintenance happens on Sundays between 02:00 and 04:00 UTC.",
        "We announce it 48 hours ahead.",
        "",
        " * Search index rebuilds",
        " * Database upgrades",
        "",
        "Region          Uptime",
        "Europe          99.98%",
        "North America   99.95%",
        "",
        "© 2024 Acme — café edition"
      ].join("\n")
    )
    for (const absent of ["https://", "chart.png", "uptime chart image", "tracking-code-42", "injected-by-script", "font-family", "Enable JavaScript"]) {
      expect(document.text).not.toContain(absent)
    }
  })

  it("does not repeat a title the body starts with, and reads fragments without <body>", async () => {
    const withTitle = "<html><head><title>Refunds</title></head><body><h1>Refunds</h1><p>Within 14 days.</p></body></html>"
    expect((await extractText({ bytes: utf8(withTitle), type: "html" })).text).toBe("Refunds\n\nWithin 14 days.")
    const fragment = "<p>First &lt;para&gt;</p><p>Second<br>line</p>"
    expect((await extractText({ bytes: utf8(fragment), type: "html" })).text).toBe("First <para>\n\nSecond\nline")
  })

  it("decodes the declared charset, and windows-1252 when the bytes are not UTF-8", async () => {
    const declared = new Uint8Array([...utf8('<meta charset="windows-1252"><p>caf'), 0xe9, ...utf8("</p>")])
    expect((await extractText({ bytes: declared, type: "html" })).text).toBe("café")
    const undeclared = new Uint8Array([...utf8("<p>na"), 0xef, ...utf8("ve</p>")])
    expect((await extractText({ bytes: undeclared, type: "html" })).text).toBe("naïve")
    const utf8Page = utf8("<p>Zürich 日本</p>")
    expect((await extractText({ bytes: utf8Page, type: "html" })).text).toBe("Zürich 日本")
  })

  it("fails with too_large past the cap", async () => {
    await failure(extractText({ bytes: fixture("page.html"), type: "html" }, { maxChars: 100 }), "too_large", "html")
  })
})

describe("detectType", () => {
  const table: Array<[string | undefined, string | undefined, DocumentType | null]> = [
    ["handbook.pdf", undefined, "pdf"],
    ["HANDBOOK.PDF", "application/octet-stream", "pdf"],
    ["customers.csv", undefined, "csv"],
    ["people.tsv", undefined, "csv"],
    ["notes.txt", undefined, "txt"],
    ["notes.text", undefined, "txt"],
    ["guide.md", "text/plain", "md"],
    ["guide.markdown", undefined, "md"],
    ["page.html", undefined, "html"],
    ["page.htm", undefined, "html"],
    ["archive.tar.gz", undefined, null],
    ["report.docx", undefined, null],
    ["C:\\Users\\ada\\report.final.pdf", undefined, "pdf"],
    ["dir/sub/notes.TXT", undefined, "txt"],
    ["README", undefined, null],
    [".md", undefined, null],
    ["upload", "application/pdf", "pdf"],
    ["upload.bin", "text/csv; charset=utf-8", "csv"],
    [undefined, "Text/Plain; charset=UTF-8", "txt"],
    [undefined, "text/markdown", "md"],
    [undefined, "text/x-markdown", "md"],
    [undefined, "text/html", "html"],
    [undefined, "application/xhtml+xml", "html"],
    [undefined, "text/tab-separated-values", "csv"],
    [undefined, "application/octet-stream", null],
    [undefined, "image/png", null],
    [undefined, "", null],
    [undefined, undefined, null],
    ["photo.png", "image/png", null],
    ["notes.unknown", "text/plain", "txt"]
  ]
  it.each(table)("detectType(%j, %j) is %j", (name, contentType, expected) => {
    expect(detectType(name, contentType)).toBe(expected)
  })
})
