/** Plain-text rendering of blocks: no colors, no escape sequences, aligned columns. */
import type { Block } from "./blocks.js"

const pad = (text: string, width: number) => text + " ".repeat(Math.max(0, width - text.length))

const fields = (rows: ReadonlyArray<readonly [string, string]>): Array<string> => {
  const width = Math.max(0, ...rows.map(([label]) => label.length + 1))
  return rows.map(([label, value]) => `${pad(`${label}:`, width)} ${value}`)
}

const table = (columns: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): Array<string> => {
  const all = [columns.map((c) => c.toUpperCase()), ...rows]
  const widths = columns.map((_, i) => Math.max(...all.map((row) => (row[i] ?? "").length)))
  return all.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : pad(cell, widths[i] ?? 0)))
      .join("  ")
      .trimEnd()
  )
}

const lines = (block: Block): Array<string> => {
  switch (block.kind) {
    case "title":
    case "note":
      return [block.text]
    case "fields":
      return fields(block.rows)
    case "table":
      return block.rows.length === 0 ? [block.empty] : table(block.columns, block.rows)
    case "secret":
      return ["", `${block.label}: ${block.value}`, block.note, ""]
  }
}

/** Renders blocks as plain text, ending with a newline. */
export const renderPlain = (blocks: ReadonlyArray<Block>): string => {
  const out = blocks.flatMap(lines)
  while (out.at(-1) === "") out.pop()
  return `${out.join("\n")}\n`
}
