/**
 * Text extraction for uploaded documents (contract: "Source (document)", "Source status",
 * `POST /knowledgebases/{id}/sources`). The first step of the ingestion pipeline: the bytes of a
 * PDF, CSV, TXT, MD or HTML document become one plain `text` plus `sections` that say where each
 * PDF page or block of CSV rows lies in that text, so a search hit can cite "page 3" or "rows 21–40".
 * Chunking ({@link ./chunk.ts}) and indexing come after; a failure here is what turns a source
 * `failed` with its `errorMessage`.
 *
 * The module is pure apart from reading the pdfjs-dist assets (standard font data and CMaps) from
 * `node_modules` when a PDF needs them. Nothing is ever fetched over the network.
 *
 * Per type:
 *
 * - **pdf** — pdfjs-dist's Node build (`pdfjs-dist/legacy/build/pdf.mjs`), loaded lazily on the
 *   first PDF and run without a worker thread (its worker module is imported into this thread, so
 *   pdfjs uses it in place). The text of each page keeps its lines; a vertical gap of about two lines
 *   becomes a blank line (a paragraph break). Pages are joined with a blank line; each page with text
 *   is a section `page N` (1-based; pages without text get no section). A document in which no page
 *   has text fails with reason `no_text`; a password-protected one with `encrypted_pdf`; anything
 *   pdfjs cannot parse with `invalid_pdf`.
 * - **csv** — csv-parse. The first record is the header and names the fields; every later record
 *   becomes one line `header1: value1; header2: value2` (empty values are left out, values longer
 *   than the header are named `column N`, missing ones are left out, line breaks inside quoted values
 *   become spaces). Records whose values are all empty are skipped and not counted. Rows are numbered
 *   from 1 (the first record after the header) and grouped into blocks of {@link csvRowsPerSection};
 *   blocks are separated by a blank line and each is a section `rows A–B` (en dash), or `row A` for a
 *   block of one. Quoted fields, a BOM, CRLF and ragged rows are all accepted; the delimiter is a
 *   comma unless the name ends in `.tsv` (tab) or the header line clearly uses `;`, tab or `|`
 *   instead. A CSV with no rows after the header gives empty text.
 * - **txt**, **md** — the bytes must be UTF-8 (a BOM is dropped) without NUL characters, otherwise
 *   `invalid_text`. The text is kept as is (markdown syntax stays: search copes with it), except the
 *   normalization below. No sections.
 * - **html** — html-to-text: the `<title>` (when the body does not already start with it), then the
 *   body as plain text without word wrapping; links keep their text but not their address; images,
 *   scripts, styles, `<noscript>`, `<template>` and `<svg>` are dropped; headings keep their case;
 *   tables become one line per row; runs of blank lines become one. The encoding comes from a BOM,
 *   else a `<meta charset>` in the first KB, else UTF-8 when the bytes are valid UTF-8, else
 *   windows-1252 (what browsers do). No sections.
 *
 * Every type is normalized the same way at the end: CRLF and lone CR become LF, and the text is put
 * in Unicode NFC form (so "é" typed either way is found by the same query). Offsets in `sections`
 * are UTF-16 code unit indexes into the final `text` (what `String.prototype.slice` takes).
 *
 * The extracted text is capped at {@link maxExtractedChars} characters (UTF-16 code units); longer
 * text fails with reason `too_large` rather than being cut silently.
 *
 * Failures reject with {@link ExtractionFailed}, a `Data.TaggedError` from `effect`: it is an
 * `Error` (so `try`/`catch` and `instanceof` work) with `_tag: "ExtractionFailed"` (so
 * `Effect.tryPromise` callers can keep it typed and use `Effect.catchTag`). Its `message` is written
 * for people and can be stored as the source's `errorMessage` unchanged; its `reason` is for code.
 */
import { parse as parseCsv } from "csv-parse/sync"
import { Data } from "effect"
import { convert as htmlToText, type HtmlToTextOptions } from "html-to-text"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, sep } from "node:path"

/** The document types extraction understands (the `type` of an uploaded Source). */
export type DocumentType = "pdf" | "csv" | "txt" | "md" | "html"

/** Every {@link DocumentType}, in a fixed order. */
export const documentTypes: ReadonlyArray<DocumentType> = ["pdf", "csv", "txt", "md", "html"]

/**
 * A span of the extracted text that a citation can name: a PDF page (`page 3`) or a block of CSV
 * rows (`rows 21–40`). `start` is inclusive, `end` exclusive, both offsets into
 * {@link ExtractedDocument.text}; `text.slice(start, end)` is the section's text, without the blank
 * lines that separate sections.
 */
export interface Section {
  label: string
  start: number
  end: number
}

/** The result of {@link extractText}: the document as plain text, and its citable sections in order. */
export interface ExtractedDocument {
  text: string
  /** In document order, never overlapping; empty for TXT, MD and HTML. */
  sections: Array<Section>
}

/** What {@link extractText} reads. */
export interface ExtractionInput {
  /** The file's bytes. Never modified (PDF extraction works on a copy). */
  bytes: Uint8Array
  type: DocumentType
  /** The file name, if known. Only used to read a `.tsv` file as tab-separated. */
  name?: string | undefined
}

/** Options of {@link extractText}. */
export interface ExtractionOptions {
  /** The most characters (UTF-16 code units) the text may have; defaults to {@link maxExtractedChars}. */
  maxChars?: number | undefined
}

/** The most characters (UTF-16 code units) an extracted text may have: 20 million. */
export const maxExtractedChars = 20_000_000

/** How many CSV rows make one section (`rows 1–20`, `rows 21–40`, …). */
export const csvRowsPerSection = 20

/**
 * Why extraction failed, for code:
 *
 * - `invalid_pdf`: pdfjs could not parse the bytes as a PDF (corrupt, truncated or not a PDF).
 * - `encrypted_pdf`: the PDF needs a password.
 * - `no_text`: the PDF parsed but no page has text (scanned images without OCR).
 * - `invalid_text`: a TXT, MD or CSV file that is not UTF-8 text.
 * - `invalid_csv`: csv-parse rejected the file (an unclosed quote, for instance).
 * - `invalid_html`: html-to-text failed on the document.
 * - `too_large`: the text is longer than the cap ({@link maxExtractedChars}).
 */
export type ExtractionFailureReason =
  | "invalid_pdf"
  | "encrypted_pdf"
  | "no_text"
  | "invalid_text"
  | "invalid_csv"
  | "invalid_html"
  | "too_large"

/**
 * Extraction failed. `message` is a sentence for people (it starts in lower case, as in "the PDF
 * has no extractable text (scanned images?)", and suits a source's `errorMessage`); `reason` is the
 * machine-readable kind; `type` is the document type that was being read.
 */
export class ExtractionFailed extends Data.TaggedError("ExtractionFailed")<{
  readonly reason: ExtractionFailureReason
  readonly type: DocumentType
  readonly message: string
}> {}

const fail = (type: DocumentType, reason: ExtractionFailureReason, message: string): ExtractionFailed =>
  new ExtractionFailed({ reason, type, message })

// ---------------------------------------------------------------------------------------------
// Type detection
// ---------------------------------------------------------------------------------------------

const typeByExtension: ReadonlyMap<string, DocumentType> = new Map([
  ["pdf", "pdf"],
  ["csv", "csv"],
  ["tsv", "csv"],
  ["txt", "txt"],
  ["text", "txt"],
  ["md", "md"],
  ["markdown", "md"],
  ["mdown", "md"],
  ["mkd", "md"],
  ["html", "html"],
  ["htm", "html"],
  ["xhtml", "html"]
])

const typeByMime: ReadonlyMap<string, DocumentType> = new Map([
  ["application/pdf", "pdf"],
  ["application/x-pdf", "pdf"],
  ["text/csv", "csv"],
  ["application/csv", "csv"],
  ["text/x-csv", "csv"],
  ["text/comma-separated-values", "csv"],
  ["text/tab-separated-values", "csv"],
  ["text/plain", "txt"],
  ["text/markdown", "md"],
  ["text/x-markdown", "md"],
  ["text/html", "html"],
  ["application/xhtml+xml", "html"]
])

/**
 * The document type of an upload, from its file name's extension or else its MIME type (for the
 * `file` part of a multipart upload), or `null` when neither names a supported type.
 *
 * The extension wins when it is one we know (browsers often send `application/octet-stream`, and
 * some send `text/plain` for `.md` or `.csv`); otherwise the MIME type decides. Both are
 * case-insensitive; MIME parameters (`; charset=utf-8`) are ignored. Extensions: `.pdf`; `.csv`,
 * `.tsv`; `.txt`, `.text`; `.md`, `.markdown`, `.mdown`, `.mkd`; `.html`, `.htm`, `.xhtml`. MIME
 * types: `application/pdf`, `application/x-pdf`; `text/csv`, `application/csv`, `text/x-csv`,
 * `text/comma-separated-values`, `text/tab-separated-values`; `text/plain`; `text/markdown`,
 * `text/x-markdown`; `text/html`, `application/xhtml+xml`.
 *
 * The contract accepts PDF, CSV, TXT and MD as multipart files; `html` is returned too (for
 * documents fetched from a `url`), and a caller that does not accept it decides so itself.
 */
export const detectType = (name: string | undefined, contentType: string | undefined): DocumentType | null => {
  if (name !== undefined) {
    const base = name.trim().split(/[\\/]/).pop() ?? ""
    const dot = base.lastIndexOf(".")
    if (dot > 0) {
      const byExtension = typeByExtension.get(base.slice(dot + 1).toLowerCase())
      if (byExtension !== undefined) return byExtension
    }
  }
  if (contentType !== undefined) {
    const essence = (contentType.split(";")[0] ?? "").trim().toLowerCase()
    const byMime = typeByMime.get(essence)
    if (byMime !== undefined) return byMime
  }
  return null
}

// ---------------------------------------------------------------------------------------------
// Entry point
// ---------------------------------------------------------------------------------------------

/**
 * Extracts the text of a document (see the module comment for what each type gives). Rejects
 * with {@link ExtractionFailed} when the document cannot be read or its text is over the cap;
 * never rejects with anything else for bad input.
 */
export const extractText = async (input: ExtractionInput, options?: ExtractionOptions): Promise<ExtractedDocument> => {
  const cap = options?.maxChars ?? maxExtractedChars
  const document = await extractRaw(input, cap)
  return finish(input.type, document, cap)
}

const extractRaw = (input: ExtractionInput, cap: number): Promise<ExtractedDocument> | ExtractedDocument => {
  switch (input.type) {
    case "pdf":
      return extractPdf(input.bytes, cap)
    case "csv":
      return extractCsv(input.bytes, input.name, cap)
    case "txt":
    case "md":
      return { text: decodeUtf8Text(input.type, input.bytes), sections: [] }
    case "html":
      return extractHtml(input.bytes, cap)
  }
}

/** The characters the cap is phrased with: "20,000,000". */
const formatCount = (n: number): string => n.toLocaleString("en-US")

const tooLarge = (type: DocumentType, cap: number): ExtractionFailed =>
  fail(type, "too_large", `the extracted text is longer than the limit of ${formatCount(cap)} characters`)

const checkLength = (type: DocumentType, text: string, cap: number): string => {
  if (text.length > cap) throw tooLarge(type, cap)
  return text
}

/**
 * Whether text of `length` characters before normalization is over the cap whatever the
 * normalization does: NFC at most divides the length by 3 (a Hangul syllable typed as three jamo),
 * so past three times the cap extraction can stop early without changing the outcome.
 */
const hopelesslyLong = (length: number, cap: number): boolean => length > 3 * cap

/**
 * The final normalization every type shares: line breaks to LF and Unicode NFC, with each
 * section's offsets carried over. Sections are separated by text the normalization leaves alone
 * (LF only), so each piece is normalized on its own and the offsets are recomputed from the pieces.
 */
const finish = (type: DocumentType, document: ExtractedDocument, cap: number): ExtractedDocument => {
  const normalize = (s: string): string => s.replace(/\r\n?/g, "\n").normalize("NFC")
  if (document.sections.length === 0) {
    return { text: checkLength(type, normalize(document.text), cap), sections: [] }
  }
  let text = ""
  let cursor = 0
  const sections: Array<Section> = []
  for (const section of document.sections) {
    text += normalize(document.text.slice(cursor, section.start))
    const start = text.length
    text += normalize(document.text.slice(section.start, section.end))
    sections.push({ label: section.label, start, end: text.length })
    cursor = section.end
  }
  text += normalize(document.text.slice(cursor))
  return { text: checkLength(type, text, cap), sections }
}

// ---------------------------------------------------------------------------------------------
// Plain text
// ---------------------------------------------------------------------------------------------

/**
 * The offset of the first byte that breaks UTF-8 (overlong forms, surrogates and code points past
 * U+10FFFF included), or -1 when the bytes are valid. Only run after the native decoder refused, to
 * say where.
 */
const invalidUtf8Offset = (bytes: Uint8Array): number => {
  let i = 0
  while (i < bytes.length) {
    const lead = bytes[i]!
    if (lead < 0x80) {
      i++
      continue
    }
    let trailing: number
    let min: number
    if (lead >= 0xc2 && lead <= 0xdf) [trailing, min] = [1, 0x80]
    else if (lead >= 0xe0 && lead <= 0xef) [trailing, min] = [2, 0x800]
    else if (lead >= 0xf0 && lead <= 0xf4) [trailing, min] = [3, 0x10000]
    else return i
    if (i + trailing >= bytes.length) return i
    let codePoint = lead & (0x3f >> trailing)
    for (let k = 1; k <= trailing; k++) {
      const next = bytes[i + k]!
      if ((next & 0xc0) !== 0x80) return i
      codePoint = (codePoint << 6) | (next & 0x3f)
    }
    if (codePoint < min || codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) return i
    i += trailing + 1
  }
  return -1
}

const hexByte = (byte: number): string => `0x${byte.toString(16).toUpperCase().padStart(2, "0")}`

/** Decodes strict UTF-8 (a leading BOM is dropped) and refuses NUL characters, for TXT, MD and CSV. */
const decodeUtf8Text = (type: DocumentType, bytes: Uint8Array): string => {
  let text: string
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    const offset = invalidUtf8Offset(bytes)
    const where = offset >= 0 ? ` (invalid byte ${hexByte(bytes[offset] ?? 0)} at offset ${offset})` : ""
    throw fail(type, "invalid_text", `the file is not valid UTF-8 text${where}`)
  }
  const nul = text.indexOf("\u0000")
  if (nul >= 0) {
    throw fail(
      type,
      "invalid_text",
      `the file is not text: it contains a NUL character at character ${nul} (a binary file, or UTF-16 text?)`
    )
  }
  return text
}

// ---------------------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------------------

/**
 * The field delimiter: a tab for `.tsv` names; otherwise the most frequent of `,` `;` tab `|`
 * outside quotes on the first line, with a comma on ties and when none occurs.
 */
const sniffDelimiter = (text: string, name: string | undefined): string => {
  if (name !== undefined && /\.tsv$/i.test(name.trim())) return "\t"
  const counts = new Map<string, number>([
    [",", 0],
    [";", 0],
    ["\t", 0],
    ["|", 0]
  ])
  let quoted = false
  for (const char of text.slice(0, 64 * 1024)) {
    if (char === '"') quoted = !quoted
    else if (!quoted && (char === "\n" || char === "\r")) break
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1)
  }
  let best = ","
  for (const [candidate, count] of counts) if (count > counts.get(best)!) best = candidate
  return best
}

/** One cell, readable on one line: trimmed, line breaks (and the spaces around them) made one space. */
const cleanCell = (value: string): string => value.replace(/\s*[\r\n]+\s*/g, " ").trim()

const extractCsv = (bytes: Uint8Array, name: string | undefined, cap: number): ExtractedDocument => {
  const source = decodeUtf8Text("csv", bytes)
  let records: Array<Array<string>>
  try {
    records = parseCsv(source, {
      bom: true,
      delimiter: sniffDelimiter(source, name),
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true
    })
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error)
    throw fail("csv", "invalid_csv", `the CSV could not be parsed: ${detail}`)
  }
  const [headerRecord, ...rows] = records
  const header = (headerRecord ?? []).map(cleanCell)
  const fieldName = (i: number): string => {
    const named = header[i]
    return named !== undefined && named !== "" ? named : `column ${i + 1}`
  }

  const lines: Array<string> = []
  let length = 0
  for (const row of rows) {
    const fields: Array<string> = []
    row.forEach((raw, i) => {
      const value = cleanCell(raw)
      if (value !== "") fields.push(`${fieldName(i)}: ${value}`)
    })
    if (fields.length === 0) continue
    const line = fields.join("; ")
    length += line.length
    if (hopelesslyLong(length, cap)) throw tooLarge("csv", cap)
    lines.push(line)
  }

  let text = ""
  const sections: Array<Section> = []
  for (let first = 0; first < lines.length; first += csvRowsPerSection) {
    const block = lines.slice(first, first + csvRowsPerSection)
    if (text !== "") text += "\n\n"
    const start = text.length
    text += block.join("\n")
    const last = first + block.length
    sections.push({ label: block.length === 1 ? `row ${first + 1}` : `rows ${first + 1}–${last}`, start, end: text.length })
  }
  return { text, sections }
}

// ---------------------------------------------------------------------------------------------
// HTML
// ---------------------------------------------------------------------------------------------

/** The encoding of an HTML document: BOM, else `<meta charset>` / `http-equiv` in the first KB, else UTF-8 or windows-1252. */
const decodeHtml = (bytes: Uint8Array): string => {
  const b0 = bytes[0]
  const b1 = bytes[1]
  if (b0 === 0xfe && b1 === 0xff) return new TextDecoder("utf-16be").decode(bytes)
  if (b0 === 0xff && b1 === 0xfe) return new TextDecoder("utf-16le").decode(bytes)
  if (b0 === 0xef && b1 === 0xbb && bytes[2] === 0xbf) return new TextDecoder("utf-8").decode(bytes)
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 1024))
  const declared = /<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)/i.exec(head)?.[1]
  if (declared !== undefined) {
    try {
      const decoder = new TextDecoder(declared)
      // A page that says UTF-16 in ASCII-compatible bytes is UTF-8 (as the HTML standard says).
      if (!decoder.encoding.startsWith("utf-16")) return decoder.decode(bytes)
    } catch {
      // An encoding this runtime does not know: fall through to the guess.
    }
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return new TextDecoder("windows-1252").decode(bytes)
  }
}

const headingSelectors = ["h1", "h2", "h3", "h4", "h5", "h6"].map((selector) => ({
  selector,
  options: { uppercase: false }
}))

/** html-to-text options for the body: unwrapped, link text without addresses, no images or non-content elements. */
const htmlBodyOptions: HtmlToTextOptions = {
  wordwrap: false,
  limits: { maxInputLength: Number.MAX_SAFE_INTEGER },
  selectors: [
    { selector: "a", options: { ignoreHref: true } },
    { selector: "img", format: "skip" },
    { selector: "script", format: "skip" },
    { selector: "style", format: "skip" },
    { selector: "noscript", format: "skip" },
    { selector: "template", format: "skip" },
    { selector: "svg", format: "skip" },
    { selector: "head", format: "skip" },
    ...headingSelectors,
    { selector: "table", format: "dataTable", options: { uppercaseHeaderCells: false, maxColumnWidth: 1_000_000 } }
  ]
}

/** html-to-text options that read only the `<title>`. */
const htmlTitleOptions: HtmlToTextOptions = {
  wordwrap: false,
  limits: { maxInputLength: Number.MAX_SAFE_INTEGER },
  baseElements: { selectors: ["title"], returnDomByDefault: false }
}

const extractHtml = (bytes: Uint8Array, cap: number): ExtractedDocument => {
  const html = decodeHtml(bytes).replace(/\u0000/g, "")
  let body: string
  let title: string
  try {
    body = htmlToText(html, htmlBodyOptions)
      .replace(/[ \t]+$/gm, "")
      .replace(/\n{3,}/g, "\n\n")
      .trim()
    title = htmlToText(html, htmlTitleOptions).replace(/\s+/g, " ").trim()
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error)
    throw fail("html", "invalid_html", `the HTML could not be converted to text: ${detail}`)
  }
  const text = title !== "" && !body.startsWith(title) ? (body === "" ? title : `${title}\n\n${body}`) : body
  if (hopelesslyLong(text.length, cap)) throw tooLarge("html", cap)
  return { text, sections: [] }
}

// ---------------------------------------------------------------------------------------------
// PDF
// ---------------------------------------------------------------------------------------------

type Pdfjs = typeof import("pdfjs-dist/legacy/build/pdf.mjs")

let pdfjsModule: Promise<Pdfjs> | undefined

/**
 * pdfjs-dist's Node build, loaded on first use. Importing its worker module first sets
 * `globalThis.pdfjsWorker`, which makes pdfjs run the worker's code in this thread (the "fake
 * worker") instead of spawning a worker or resolving `workerSrc`.
 */
const loadPdfjs = (): Promise<Pdfjs> => {
  pdfjsModule ??= (async () => {
    // The worker build has no type declarations; only its side effect matters.
    const workerModule: string = "pdfjs-dist/legacy/build/pdf.worker.mjs"
    await import(workerModule)
    return import("pdfjs-dist/legacy/build/pdf.mjs")
  })().catch((error: unknown) => {
    pdfjsModule = undefined
    throw error
  })
  return pdfjsModule
}

/**
 * Local paths (with a trailing separator) of the standard font data and CMaps shipped with
 * pdfjs-dist, read from disk by pdfjs's Node factories. CMaps matter for text: CJK fonts map glyphs
 * to characters through them. Left out when the package folder cannot be found (pdfjs then only
 * warns and extracts what it can).
 */
const pdfjsAssets = ((): { standardFontDataUrl?: string; cMapUrl?: string; cMapPacked?: boolean } => {
  try {
    const root = dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json"))
    const fonts = join(root, "standard_fonts")
    const cmaps = join(root, "cmaps")
    return {
      ...(existsSync(fonts) ? { standardFontDataUrl: fonts + sep } : {}),
      ...(existsSync(cmaps) ? { cMapUrl: cmaps + sep, cMapPacked: true } : {})
    }
  } catch {
    return {}
  }
})()

/** One line of a page: its text, its baseline and its tallest glyph height (0 when unknown). */
interface PdfLine {
  text: string
  y: number | undefined
  height: number
}

/** The text items of a page, as pdfjs gives them (marked-content items are not requested). */
interface PdfTextItem {
  str: string
  hasEOL: boolean
  transform: Array<number>
  height: number
}

/**
 * A page's text from its text items: items are concatenated, `hasEOL` ends a line, and a gap
 * between two lines of more than 1.8 times the smaller line height becomes a blank line.
 */
const pageText = (items: ReadonlyArray<PdfTextItem>): string => {
  const lines: Array<PdfLine> = []
  let current: PdfLine = { text: "", y: undefined, height: 0 }
  for (const item of items) {
    if (item.str !== "") {
      current.text += item.str
      if (item.str.trim() !== "") {
        current.y ??= item.transform[5]
        current.height = Math.max(current.height, Math.abs(item.height))
      }
    }
    if (item.hasEOL) {
      lines.push(current)
      current = { text: "", y: undefined, height: 0 }
    }
  }
  lines.push(current)

  let text = ""
  let previous: PdfLine | undefined
  for (const line of lines) {
    const content = line.text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "").trimEnd()
    if (content.trim() === "") continue
    if (previous !== undefined) {
      const lineHeight = Math.min(previous.height, line.height)
      const gap = previous.y !== undefined && line.y !== undefined ? Math.abs(previous.y - line.y) : 0
      text += lineHeight > 0 && gap > 1.8 * lineHeight ? "\n\n" : "\n"
    }
    text += content
    previous = line
  }
  return text.trim()
}

const pdfFailure = (error: unknown): ExtractionFailed => {
  const name = error instanceof Error ? error.name : ""
  const detail = error instanceof Error ? error.message : String(error)
  if (name === "PasswordException") {
    return fail("pdf", "encrypted_pdf", "the PDF is encrypted (password-protected); upload a copy without a password")
  }
  return fail("pdf", "invalid_pdf", `the PDF is corrupt or truncated and could not be read (${detail})`)
}

const extractPdf = async (bytes: Uint8Array, cap: number): Promise<ExtractedDocument> => {
  if (bytes.length === 0) throw fail("pdf", "invalid_pdf", "the PDF is empty (0 bytes)")
  const pdfjs = await loadPdfjs()
  const loadingTask = pdfjs.getDocument({
    // A copy: pdfjs transfers (detaches) the buffer it is given.
    data: new Uint8Array(bytes),
    ...pdfjsAssets,
    isEvalSupported: false,
    enableXfa: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: pdfjs.VerbosityLevel.ERRORS
  })
  try {
    let document: Awaited<typeof loadingTask.promise>
    try {
      document = await loadingTask.promise
    } catch (error) {
      throw pdfFailure(error)
    }
    let text = ""
    const sections: Array<Section> = []
    for (let pageNumber = 1; pageNumber <= document.numPages; pageNumber++) {
      let content: string
      try {
        const page = await document.getPage(pageNumber)
        const textContent = await page.getTextContent({ includeMarkedContent: false })
        content = pageText(textContent.items.filter((item): item is Extract<typeof item, PdfTextItem> => "str" in item))
        page.cleanup()
      } catch (error) {
        throw pdfFailure(error)
      }
      if (content === "") continue
      if (text !== "") text += "\n\n"
      const start = text.length
      text += content
      if (hopelesslyLong(text.length, cap)) throw tooLarge("pdf", cap)
      sections.push({ label: `page ${pageNumber}`, start, end: text.length })
    }
    if (text === "") {
      throw fail(
        "pdf",
        "no_text",
        "the PDF has no extractable text (scanned images?); run text recognition (OCR) on it and upload the result"
      )
    }
    return { text, sections }
  } finally {
    await loadingTask.destroy().catch(() => undefined)
  }
}
