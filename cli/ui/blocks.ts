/**
 * Human output as data: commands describe what to show as blocks, and a renderer prints them,
 * with ink on a terminal or as plain text otherwise.
 */

/** Emphasis of a headline or note. */
export type Tone = "success" | "warning" | "info"

/** One piece of human output. */
export type Block =
  /** A headline, e.g. "Created organization acme". */
  | { readonly kind: "title"; readonly text: string; readonly tone?: Tone }
  /** Labelled values, shown as a key/value box. */
  | { readonly kind: "fields"; readonly rows: ReadonlyArray<readonly [label: string, value: string]> }
  /** A list, shown as a table; `empty` is shown when there are no rows. */
  | {
      readonly kind: "table"
      readonly columns: ReadonlyArray<string>
      readonly rows: ReadonlyArray<ReadonlyArray<string>>
      readonly empty: string
    }
  /** A secret shown once, with a warning. */
  | { readonly kind: "secret"; readonly label: string; readonly value: string; readonly note: string }
  /** A line of text. */
  | { readonly kind: "note"; readonly text: string; readonly tone?: Tone }

/** A short UTC time for people: `2026-11-21 12:00`. */
export const shortTime = (iso: string | null, none = "never"): string =>
  iso === null ? none : iso.replace("T", " ").slice(0, 16)

/** A size for people: `912 B`, `1.3 KB`, `4.5 MB` (decimal units, like the API's limits). */
export const byteSize = (bytes: number): string => {
  if (bytes < 1000) return `${bytes} B`
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} KB`
  return `${(bytes / 1_000_000).toFixed(1)} MB`
}
