/**
 * A reader of the SMART format of the classic test collections (CISI, MEDLINE, CRAN…): records
 * opened by `.I <id>`, then fields opened by a line `.<letter>` (`.T` title, `.A` authors, `.B`
 * publication, `.W` text, `.X` cross-references, `.K` keywords, `.C` categories), and the relevance
 * files (`.REL`: one judgment a line, whitespace-separated).
 *
 * Only what a retrieval benchmark compares is kept: the title (`.T`) and the text (`.W`) of a
 * document, the text (`.W`) of a query. Author lists, years, keywords, categories and above all the
 * `.X` citation cross-references (lines of numbers naming other documents) are not text of the
 * document and are left out.
 */

/** One record of a SMART file: its id and its fields by letter (a field met twice is joined). */
export interface SmartRecord {
  readonly id: string
  readonly fields: ReadonlyMap<string, string>
}

/** A document as the benchmark indexes it. */
export interface CollectionDocument {
  readonly id: string
  /** The `.T` field, on one line; null when the collection has no titles (MEDLINE). */
  readonly title: string | null
  /** The `.W` field: paragraphs (indented or blank-line separated) each on one line, joined by a blank line. */
  readonly text: string
}

/** A query as the benchmark sends it. */
export interface CollectionQuery {
  readonly id: string
  readonly text: string
}

/** One relevance judgment: `docId` is relevant to `queryId`. */
export interface Judgment {
  readonly queryId: string
  readonly docId: string
}

const recordStart = /^\.I\s+(\S+)\s*$/
const fieldStart = /^\.([A-Z])\s*$/

/**
 * The records of a SMART file, in file order. Line ends may be CRLF; a `.X`-style line is a field
 * marker only when it is exactly a dot, one capital letter and optional trailing blanks, so text
 * lines that start with a dot (".5 percent") stay text. Throws on text before the first `.I`, a
 * duplicate id, or a field line outside a field.
 */
export const parseSmart = (source: string): Array<SmartRecord> => {
  const records: Array<{ id: string; fields: Map<string, Array<string>> }> = []
  const seen = new Set<string>()
  let field: Array<string> | null = null
  const lines = source.replace(/\r\n?/g, "\n").split("\n")
  lines.forEach((line, index) => {
    const opened = recordStart.exec(line)
    if (opened) {
      const id = opened[1]!
      if (seen.has(id)) throw new Error(`line ${index + 1}: record .I ${id} appears twice`)
      seen.add(id)
      records.push({ id, fields: new Map() })
      field = null
      return
    }
    const current = records.at(-1)
    const marker = fieldStart.exec(line)
    if (marker) {
      if (!current) throw new Error(`line ${index + 1}: field .${marker[1]} before the first .I`)
      const lines: Array<string> = current.fields.get(marker[1]!) ?? []
      if (lines.length > 0) lines.push("")
      current.fields.set(marker[1]!, lines)
      field = lines
      return
    }
    if (field === null) {
      if (line.trim() === "") return
      throw new Error(`line ${index + 1}: text outside a field: ${JSON.stringify(line.slice(0, 60))}`)
    }
    ;(field as Array<string>).push(line)
  })
  return records.map(({ id, fields }) => ({ id, fields: new Map([...fields].map(([letter, lines]) => [letter, lines.join("\n")])) }))
}

/** A field's text on one line: every run of whitespace one space. */
export const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim()

/**
 * A field's text as paragraphs: a new paragraph starts at a blank line or an indented line (as
 * CISI's abstracts mark them); the hard-wrapped lines of a paragraph are joined by one space.
 */
export const paragraphs = (text: string): string => {
  const found: Array<string> = []
  let current: Array<string> = []
  const close = () => {
    const joined = oneLine(current.join(" "))
    if (joined !== "") found.push(joined)
    current = []
  }
  for (const line of text.split("\n")) {
    if (line.trim() === "" || /^\s/.test(line)) close()
    current.push(line)
  }
  close()
  return found.join("\n\n")
}

/** The documents of a collection's `.ALL` file (`hasTitles` false keeps `title` null). */
export const smartDocuments = (source: string, hasTitles: boolean): Array<CollectionDocument> =>
  parseSmart(source).map((record) => {
    const text = paragraphs(record.fields.get("W") ?? "")
    const title = hasTitles ? oneLine(record.fields.get("T") ?? "") : ""
    if (text === "" && title === "") throw new Error(`document ${record.id} has neither a title nor a text`)
    return { id: record.id, title: hasTitles ? title : null, text }
  })

/** The queries of a collection's `.QRY` file: the `.W` text of each. */
export const smartQueries = (source: string): Array<CollectionQuery> =>
  parseSmart(source).map((record) => {
    const text = oneLine(record.fields.get("W") ?? "")
    if (text === "") throw new Error(`query ${record.id} has no .W text`)
    return { id: record.id, text }
  })

/**
 * The judgments of a `.REL` file. Its columns differ between collections: CISI writes
 * `query doc 0 0.000000`, MEDLINE `query 0 doc 1`; `docColumn` says which column (from 0) holds
 * the document. Every listed pair is a relevant one (neither file grades relevance). Duplicate
 * pairs are kept once.
 */
export const smartJudgments = (source: string, docColumn: 1 | 2): Array<Judgment> => {
  const seen = new Set<string>()
  const judgments: Array<Judgment> = []
  source
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .forEach((line, index) => {
      if (line.trim() === "") return
      const columns = line.trim().split(/\s+/)
      const queryId = columns[0]
      const docId = columns[docColumn]
      if (columns.length !== 4 || !queryId || !docId || !/^\d+$/.test(queryId) || !/^\d+$/.test(docId)) {
        throw new Error(`line ${index + 1}: not a judgment: ${JSON.stringify(line)}`)
      }
      const key = `${queryId} ${docId}`
      if (seen.has(key)) return
      seen.add(key)
      judgments.push({ queryId, docId })
    })
  return judgments
}
