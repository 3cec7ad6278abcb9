/**
 * `search_docs`: the service's own documentation, searchable offline. The README, `docs/*.md` and
 * the copy of the spec in `docs/spec/` are split into sections (one per heading) and ranked with
 * BM25 over the search's own tokenizer (`queryTerms`, Porter stems), built once per process.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { idf as positiveIdf } from "../knowledge/search/bm25f.js"
import { stemOf } from "../knowledge/search/analyzer.js"
import { queryTerms, snippetOf } from "../knowledge/search/query.js"

/** One section of a document. */
export interface DocSection {
  /** The file, relative to the project root (`docs/spec/external-api.md`). */
  readonly file: string
  /** The section's heading path, `MCP server` or `Decisions > HTTP contract`. */
  readonly heading: string
  readonly text: string
}

/** A hit of `search_docs`. */
export interface DocHit {
  readonly file: string
  readonly heading: string
  readonly score: number
  readonly snippet: string
}

const bm25 = { k1: 1.2, b: 0.75 } as const

/** The project root: the nearest folder above this module holding `package.json` and `docs/`. */
const projectRoot = (): string | null => {
  let folder = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(join(folder, "package.json")) && existsSync(join(folder, "docs"))) return folder
    const parent = dirname(folder)
    if (parent === folder) return null
    folder = parent
  }
}

/** The markdown files indexed: README, `docs/*.md`, `docs/spec/*.md`. */
const documentFiles = (root: string): Array<string> => {
  const inFolder = (folder: string) =>
    existsSync(folder) ? readdirSync(folder).filter((name) => name.endsWith(".md")).sort().map((name) => join(folder, name)) : []
  return [join(root, "README.md"), ...inFolder(join(root, "docs")), ...inFolder(join(root, "docs", "spec"))].filter((file) => existsSync(file))
}

/** Splits markdown into sections at headings, keeping each heading's path. */
export const sectionsOf = (file: string, markdown: string): Array<DocSection> => {
  const sections: Array<DocSection> = []
  const path: Array<string> = []
  let lines: Array<string> = []
  const close = () => {
    const text = lines.join("\n").trim()
    if (text.length > 0) sections.push({ file, heading: path.filter(Boolean).join(" > ") || file, text })
    lines = []
  }
  let fenced = false
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced
    const heading = fenced ? null : /^(#{1,4})\s+(.*)$/.exec(line)
    if (heading) {
      close()
      const depth = heading[1]!.length
      path.length = depth - 1
      path[depth - 1] = heading[2]!.trim()
      continue
    }
    lines.push(line)
  }
  close()
  return sections
}

/** An in-memory BM25 index over sections. */
export class DocsIndex {
  private readonly postings = new Map<string, Map<number, number>>()
  private readonly lengths: Array<number> = []
  private readonly averageLength: number

  constructor(readonly sections: ReadonlyArray<DocSection>) {
    sections.forEach((section, index) => {
      const words = queryTermsAll(`${section.heading} ${section.text}`)
      this.lengths.push(words.length)
      for (const word of words) {
        const stem = stemOf(word)
        let posting = this.postings.get(stem)
        if (!posting) this.postings.set(stem, (posting = new Map()))
        posting.set(index, (posting.get(index) ?? 0) + 1)
      }
    })
    this.averageLength = this.lengths.reduce((sum, n) => sum + n, 0) / Math.max(1, this.lengths.length)
  }

  /** The best `limit` sections for `query`, best first. */
  search(query: string, limit: number): Array<DocHit> {
    const terms = queryTerms(query)
    const scores = new Map<number, number>()
    for (const stem of new Set(terms.map(stemOf))) {
      const posting = this.postings.get(stem)
      if (!posting) continue
      const idf = positiveIdf(this.sections.length, posting.size)
      for (const [index, frequency] of posting) {
        const norm = frequency + bm25.k1 * (1 - bm25.b + (bm25.b * this.lengths[index]!) / this.averageLength)
        scores.set(index, (scores.get(index) ?? 0) + (idf * frequency * (bm25.k1 + 1)) / norm)
      }
    }
    return [...scores]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, limit)
      .map(([index, score]) => {
        const section = this.sections[index]!
        return { file: section.file, heading: section.heading, score: Math.round(score * 1000) / 1000, snippet: snippetOf(section.text, terms) }
      })
  }
}

/** Every word of a text, repeats kept (for term frequencies). */
const queryTermsAll = (text: string): Array<string> => text.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

let built: DocsIndex | null = null

/** The documentation index of this installation, built on first use. */
export const docsIndex = (): DocsIndex => {
  if (built) return built
  const root = projectRoot()
  const sections = root === null ? [] : documentFiles(root).flatMap((file) => sectionsOf(relative(root, file), readFileSync(file, "utf8")))
  built = new DocsIndex(sections)
  return built
}
