/**
 * Reads docs/parity.md: its coverage rows (every table headed `Item | Spec reference | State |
 * Notes`, or `Feature | Command | State | Notes and tests` for local development, under the part
 * `##` heading they sit in), its summary (total, count per state, table per part), and the HTTP
 * route a row's item names, if any.
 */

/** The states the legend defines. */
export const parityStates = ["done", "partial", "not yet"] as const
export type ParityState = (typeof parityStates)[number]

/** One coverage row. */
export interface ParityRow {
  readonly line: number
  /** The `##` heading the row's table sits under. */
  readonly part: string
  readonly item: string
  readonly state: string
}

/** Counts per state. */
export type StateCounts = Record<ParityState, number>

/** What the summary at the top of the page claims. */
export interface ParitySummary {
  readonly total: number
  readonly byState: StateCounts
  readonly byPart: ReadonlyMap<string, StateCounts>
}

/** The header of a coverage table: the API's (`Item | Spec reference | State | Notes`) or local development's (`Feature | Command | State | Notes and tests`). */
const rowHeader = /^\|\s*(Item\s*\|\s*Spec reference|Feature\s*\|\s*Command)\s*\|\s*State\s*\|\s*Notes( and tests)?\s*\|\s*$/
const separator = /^\|(\s*:?-+:?\s*\|)+\s*$/

/** The cells of a markdown table line; `\|` inside a cell is kept as text. */
export const cellsOf = (line: string): Array<string> =>
  line
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim())

/** Every coverage row of the page, in order. */
export const parityRows = (markdown: string): Array<ParityRow> => {
  const rows: Array<ParityRow> = []
  let part = ""
  let inTable = false
  markdown.split("\n").forEach((text, index) => {
    if (text.startsWith("## ")) part = text.slice(3).trim()
    if (rowHeader.test(text)) {
      inTable = true
      return
    }
    if (!text.startsWith("|")) {
      inTable = false
      return
    }
    if (!inTable || separator.test(text)) return
    const [item = "", , state = ""] = cellsOf(text)
    rows.push({ line: index + 1, part, item, state })
  })
  return rows
}

/** Zero for each state. */
export const noCounts = (): StateCounts => ({ done: 0, partial: 0, "not yet": 0 })

/** Rows counted per state. */
export const countStates = (rows: ReadonlyArray<ParityRow>): StateCounts => {
  const counts = noCounts()
  for (const row of rows) if ((parityStates as ReadonlyArray<string>).includes(row.state)) counts[row.state as ParityState]++
  return counts
}

/** The summary block: `**Summary** (N rows):`, one bullet per state, and the table per part (empty when missing). */
export const paritySummary = (markdown: string): ParitySummary => {
  const total = /\*\*Summary\*\* \((\d+) rows\)/.exec(markdown)
  if (!total) throw new Error("docs/parity.md has no `**Summary** (N rows)` line")
  const byState = noCounts()
  for (const state of parityStates) {
    const bullet = new RegExp(`^- \`${state}\`: (\\d+)$`, "m").exec(markdown)
    if (!bullet) throw new Error(`docs/parity.md: the summary has no bullet for \`${state}\``)
    byState[state] = Number(bullet[1])
  }
  const byPart = new Map<string, StateCounts>()
  const lines = markdown.split("\n")
  const start = lines.findIndex((line) => /^\|\s*Part\s*\|\s*done\s*\|\s*partial\s*\|\s*not yet\s*\|\s*$/.test(line))
  for (const line of start < 0 ? [] : lines.slice(start + 2)) {
    if (!line.startsWith("|")) break
    const [part = "", done = "", partial = "", notYet = ""] = cellsOf(line)
    byPart.set(part, { done: Number(done), partial: Number(partial), "not yet": Number(notYet) })
  }
  return { total: Number(total[1]), byState, byPart }
}

/** The HTTP route an item names when it starts with one, as `METHOD /path` with `{…}` made `{}`. */
export const routeOf = (item: string): string | null => {
  const match = /^`(GET|POST|PUT|PATCH|DELETE) (\/[^`\s?]*)`/.exec(item)
  return match ? normalRoute(match[1]!, match[2]!) : null
}

/** `METHOD /path` with every path parameter written `{}`, so `{id}` and `{knowledgebaseId}` compare equal. */
export const normalRoute = (method: string, path: string): string =>
  `${method.toUpperCase()} ${path.replace(/\{[^}]*\}/g, "{}")}`
