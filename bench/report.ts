/** Small helpers the benchmark runners share for waiting and printing. */

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A number with `digits` decimals, or `-` when there is none. */
export const fmt = (value: number | null, digits = 1): string => (value === null ? "-" : value.toFixed(digits))

/** A plain text table: the first `leftColumns` columns left-aligned, the rest right-aligned. */
export const table = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  leftColumns = 1
): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n")
}
