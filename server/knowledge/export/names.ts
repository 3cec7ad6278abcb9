/**
 * File names for the Knowledgebase export archive: every page and folder title becomes a name that is
 * valid on Windows, macOS and Linux, and every page gets a path under `pages/` that cannot escape it.
 *
 * Rules of {@link safeName}, applied in this order:
 * - lone UTF-16 surrogates become U+FFFD and the title is NFC-normalized;
 * - tabs, line breaks and other white-space control characters become spaces; the characters
 *   `< > : " / \ | ? *` and the remaining control characters (C0, DEL, C1) become `_`;
 * - leading and trailing dots and white space are removed (no `.`/`..` segments, no hidden files,
 *   nothing Windows would silently strip);
 * - the name is cut to at most {@link maxNameBytes} UTF-8 bytes, extension and ` (n)` suffix included,
 *   on a grapheme boundary (never inside a character or an emoji sequence);
 * - an empty result becomes `untitled`;
 * - a Windows device name (CON, PRN, AUX, NUL, COM0-9, LPT0-9, their superscript-digit forms, CONIN$,
 *   CONOUT$), also when followed by an extension, gets `_` appended to the device part (`CON_.md`).
 *
 * {@link ExportLayout} places pages in tree order and resolves collisions inside one directory
 * case-insensitively (and normalization-insensitively), first come first served: `Notes.md`,
 * `Notes (2).md`, `Notes (3).md`, … A page claims both `<stem>.md` and the directory `<stem>` (where its
 * sub-pages go, if it has any), so a later folder or page can never take the directory of an earlier
 * page's children.
 */

/** The longest name of one path segment, in UTF-8 bytes. */
export const maxNameBytes = 100

/** The directory (with trailing `/`) that holds every page of the archive. */
export const pagesRoot = "pages/"

/** Extension of a page's file. */
export const pageExtension = ".md"

const loneSurrogates = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g
const controlWhiteSpace = /[\t\n\v\f\r\u0085]/g
const invalidCharacters = /[<>:"/\\|?*\u0000-\u001f\u007f-\u009f]/g
const edgeDotsAndSpaces = /^[\s.]+|[\s.]+$/gu

const reservedDeviceNames = new Set<string>([
  "CON",
  "PRN",
  "AUX",
  "NUL",
  "CONIN$",
  "CONOUT$",
  ...["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³"].flatMap((digit) => [
    `COM${digit}`,
    `LPT${digit}`
  ])
])

const utf8Bytes = (text: string): number => Buffer.byteLength(text, "utf8")

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" })

/** The longest prefix of `text` within `maxBytes` UTF-8 bytes, cut between graphemes (code points as a last resort). */
const truncateUtf8 = (text: string, maxBytes: number): string => {
  if (utf8Bytes(text) <= maxBytes) return text
  let kept = ""
  let bytes = 0
  for (const { segment } of graphemes.segment(text)) {
    const size = utf8Bytes(segment)
    if (bytes + size > maxBytes) {
      if (kept === "") {
        // One grapheme larger than the whole budget (e.g. a long run of combining marks): cut by code point.
        for (const codePoint of segment) {
          const pointSize = utf8Bytes(codePoint)
          if (bytes + pointSize > maxBytes) break
          kept += codePoint
          bytes += pointSize
        }
      }
      break
    }
    kept += segment
    bytes += size
  }
  return kept
}

const trimEdges = (text: string): string => text.replace(edgeDotsAndSpaces, "")

/** Characters replaced, surrogates repaired, edges trimmed; may be empty and is not yet length-capped. */
const sanitize = (title: string): string =>
  trimEdges(
    title
      .replace(loneSurrogates, "\uFFFD")
      .normalize("NFC")
      .replace(controlWhiteSpace, " ")
      .replace(invalidCharacters, "_")
  )

/** `stem` with `_` appended to its device part when Windows would read it as a device name. */
const avoidDeviceName = (stem: string): string => {
  const dot = stem.indexOf(".")
  const head = dot === -1 ? stem : stem.slice(0, dot)
  return reservedDeviceNames.has(head.trimEnd().toUpperCase()) ? `${head}_${stem.slice(head.length)}` : stem
}

/** Options of {@link safeName}. */
export interface SafeNameOptions {
  /** Appended after the name (and after any ` (n)` suffix), e.g. `.md`. Default none. */
  readonly extension?: string
  /** 1 (default) gives the plain name; n ≥ 2 gives the collision form `name (n)`. */
  readonly ordinal?: number
  /** Byte cap of the whole segment, extension included. Default {@link maxNameBytes}. */
  readonly maxBytes?: number
}

/**
 * A single path segment for `title` that is safe on every common file system (see the module
 * comment for the rules). Pure and deterministic; the result is never empty, never `.`/`..`, never
 * contains `/` or `\`, and is at most `maxBytes` UTF-8 bytes long.
 */
export const safeName = (title: string, options: SafeNameOptions = {}): string => {
  const extension = options.extension ?? ""
  const ordinal = options.ordinal ?? 1
  const maxBytes = options.maxBytes ?? maxNameBytes
  const suffix = ordinal > 1 ? ` (${ordinal})` : ""
  const clean = sanitize(title)
  let name = ""
  // A second pass with one byte less makes room for the `_` a device name may need.
  for (const slack of [0, 1]) {
    const budget = maxBytes - utf8Bytes(extension) - utf8Bytes(suffix) - slack
    const base = trimEdges(truncateUtf8(clean, Math.max(budget, 0)))
    name = avoidDeviceName((base === "" ? "untitled" : base) + suffix)
    if (utf8Bytes(name) + utf8Bytes(extension) <= maxBytes) break
  }
  return name + extension
}

/** The key under which two names count as the same: NFC plus a case fold. */
export const collisionKey = (name: string): string => name.normalize("NFC").toUpperCase().toLowerCase()

/** What {@link ExportLayout.place} needs of a page. */
export interface LayoutPage {
  readonly id: string
  readonly title: string
  readonly isFolder: boolean
  readonly parentPageId: string | null
}

/** Where one page or folder goes in the archive. */
export interface PlacedEntry {
  readonly id: string
  readonly kind: "page" | "folder"
  /** The zip entry name: `pages/…/Name.md` for a page, `pages/…/Name/` for a folder. */
  readonly path: string
  /** The directory (with trailing `/`) that the entry's children go into. */
  readonly childDirectory: string
  /** Number of path segments below `pages/` (1 for a top-level page). */
  readonly depth: number
}

/**
 * Assigns archive paths to pages given in tree order (every parent before its children). A page whose
 * parent was not placed before it (not in the export, or out of order) goes to the top level.
 */
export class ExportLayout {
  readonly #taken = new Map<string, Set<string>>()
  readonly #placed = new Map<string, PlacedEntry>()

  /** The entry placed for `id`, if any. */
  get(id: string): PlacedEntry | undefined {
    return this.#placed.get(id)
  }

  /** Places the next page; deterministic for a given sequence of calls. */
  place(page: LayoutPage): PlacedEntry {
    const parent = page.parentPageId === null ? undefined : this.#placed.get(page.parentPageId)
    const directory = parent?.childDirectory ?? pagesRoot
    const depth = (parent?.depth ?? 0) + 1
    let taken = this.#taken.get(directory)
    if (taken === undefined) {
      taken = new Set()
      this.#taken.set(directory, taken)
    }
    let entry: PlacedEntry | undefined
    for (let ordinal = 1; entry === undefined; ordinal++) {
      if (page.isFolder) {
        const name = safeName(page.title, { ordinal })
        const key = collisionKey(name)
        if (taken.has(key)) continue
        taken.add(key)
        const path = `${directory}${name}/`
        entry = { id: page.id, kind: "folder", path, childDirectory: path, depth }
      } else {
        const file = safeName(page.title, { ordinal, extension: pageExtension })
        const stem = file.slice(0, -pageExtension.length)
        const fileKey = collisionKey(file)
        const stemKey = collisionKey(stem)
        if (taken.has(fileKey) || taken.has(stemKey)) continue
        taken.add(fileKey)
        taken.add(stemKey)
        entry = { id: page.id, kind: "page", path: `${directory}${file}`, childDirectory: `${directory}${stem}/`, depth }
      }
    }
    this.#placed.set(page.id, entry)
    return entry
  }
}
