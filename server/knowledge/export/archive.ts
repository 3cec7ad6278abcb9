/**
 * The Knowledgebase export archive (`GET /knowledgebases/{id}/export`), as a pure module: it knows
 * nothing of SQL or HTTP. The caller loads the metadata, checks {@link estimateExportBytes} against
 * {@link maxExportBytes} (refusing with `export_too_large` above it), then returns
 * {@link exportArchiveStream}: an Effect `Stream` of zip bytes that pulls the pages from an Effect
 * `Stream` of the caller's (which reads each body in the caller's program, with its services).
 * {@link createExportArchive} adapts it to a Node `Readable` over plain iterables.
 *
 * Archive layout (entry order as written):
 * - `pages/…` — pages in tree order: a folder is a directory entry `pages/…/<Folder>/`; a page is
 *   `pages/…/<Title>.md` holding YAML front matter (`id`, `title`, `template`, `path`, `created`,
 *   `updated`, `author`; every string double-quoted) and then the markdown body byte for byte; the
 *   sub-pages of a page go into the directory of the same name without `.md`. Names follow
 *   `export-names.ts`.
 * - `sources.json` — array of source metadata (`id`, `name`, `type`, `status`, `sizeBytes`,
 *   `createdAt`, `updatedAt`, `parentPageId`); never file bodies, whatever the caller passes.
 * - `memories.json` — only when memories were given (personal keys): `{id, text, createdAt, updatedAt}`.
 * - `manifest.json` — written last, because its counts and file list are known only once every page
 *   has streamed; zip readers find it through the central directory like any other entry.
 *
 * Streaming: the archive is produced while the pages are read. Each file is handed to yazl lazily and
 * the page stream is only pulled while fewer than `maxPendingEntries` files wait to be written and
 * the output is below its high-water mark, so a slow or paused reader pauses the page reads too
 * (memory stays bounded by one page plus the stream buffers). Interrupting the Effect stream (a
 * client that goes away) interrupts the page stream, running its finalizers; a failure of the page
 * stream keeps its typed error.
 */
import { PassThrough, Readable } from "node:stream"
import { Data, Effect, Stream } from "effect"
import { stringify } from "yaml"
import yazl from "yazl"
import { ExportLayout, maxNameBytes, pagesRoot } from "./names.js"

export { collisionKey, ExportLayout, maxNameBytes, safeName } from "./names.js"
export type { LayoutPage, PlacedEntry, SafeNameOptions } from "./names.js"

/** 50 MB: a Knowledgebase whose export content is larger is refused with `export_too_large` (413). */
export const maxExportBytes = 50 * 1000 * 1000

/** Content type of the archive. */
export const exportContentType = "application/zip"

/** `format` of `manifest.json`. */
export const exportFormat = "svc-knowledgebase-export"

/** `version` of `manifest.json`. */
export const exportFormatVersion = 1

/** The Knowledgebase being exported, and when. */
export interface ExportKnowledgebase {
  readonly id: string
  readonly name: string
  readonly description: string
  /** ISO 8601 date-time of the export; also the timestamp of the archive's own files. */
  readonly exportedAt: string
}

/** One live page or folder, in tree order. */
export interface ExportPage {
  readonly id: string
  readonly title: string
  readonly templateKey: string
  readonly isFolder: boolean
  readonly parentPageId: string | null
  /** Folder titles from the top (as in the page index). */
  readonly path: ReadonlyArray<string>
  readonly createdAt: string
  readonly updatedAt: string
  readonly author: string | null
  /** The body; ignored for folders. */
  readonly markdown: string
}

/** Metadata of one source. Only these fields are written, even if the value carries more. */
export interface ExportSource {
  readonly id: string
  readonly name: string
  readonly type: string
  readonly status: string
  readonly sizeBytes: number
  readonly createdAt: string
  readonly updatedAt: string
  readonly parentPageId: string | null
}

/** One of the member's memories (personal keys only). */
export interface ExportMemory {
  readonly id: string
  readonly text: string
  readonly createdAt: string
  readonly updatedAt: string
}

/** A synchronous or asynchronous sequence. */
export type ExportIterable<A> = Iterable<A> | AsyncIterable<A>

/** Everything the archive is made of. */
export interface ExportInput {
  readonly knowledgebase: ExportKnowledgebase
  /** Live pages and folders in tree order (each parent before its children). */
  readonly pages: ExportIterable<ExportPage>
  readonly sources: ExportIterable<ExportSource>
  /** Given only for a personal key; `memories.json` is written exactly when this is present. */
  readonly memories?: ExportIterable<ExportMemory> | undefined
}

/** One line of the manifest's file list. */
export interface ExportManifestFile {
  /** The zip entry name (`pages/…/Name.md`, or `pages/…/Name/` for a folder). */
  readonly path: string
  readonly kind: "page" | "folder"
  readonly id: string
}

/** Content of `manifest.json`. */
export interface ExportManifest {
  readonly format: typeof exportFormat
  readonly version: typeof exportFormatVersion
  readonly knowledgebase: { readonly id: string; readonly name: string; readonly description: string }
  readonly exportedAt: string
  readonly counts: {
    readonly pages: number
    readonly folders: number
    readonly sources: number
    readonly memories?: number
  }
  readonly files: ReadonlyArray<ExportManifestFile>
}

/** Tuning of {@link createExportArchive}. */
export interface ExportArchiveOptions {
  /** Deflate level 0 (store) to 9. Default 6. */
  readonly compressionLevel?: number
  /** How many files may wait to be written before the page input is paused. Default 4. */
  readonly maxPendingEntries?: number
}

/** The archive could not be produced (the page, source or memory input failed, or zip writing did). */
export class ExportArchiveError extends Data.TaggedError("ExportArchiveError")<{ readonly cause: unknown }> {}

const frontMatterOptions = {
  defaultStringType: "QUOTE_DOUBLE",
  defaultKeyType: "PLAIN",
  lineWidth: 0
} as const

/**
 * The front matter of a page's file, `---` lines included: every string double-quoted, so the block
 * reads back the same in YAML 1.1 and 1.2 parsers whatever the title holds.
 */
export const renderFrontMatter = (
  page: Pick<ExportPage, "id" | "title" | "templateKey" | "path" | "createdAt" | "updatedAt" | "author">
): string =>
  `---\n${stringify(
    {
      id: page.id,
      title: page.title,
      template: page.templateKey,
      path: [...page.path],
      created: page.createdAt,
      updated: page.updatedAt,
      author: page.author
    },
    frontMatterOptions
  )}---\n`

/** The full text of a page's file: front matter, then the body unchanged. */
export const renderPageFile = (page: ExportPage): string => renderFrontMatter(page) + page.markdown

const pickSource = (source: ExportSource): ExportSource => ({
  id: source.id,
  name: source.name,
  type: source.type,
  status: source.status,
  sizeBytes: source.sizeBytes,
  createdAt: source.createdAt,
  updatedAt: source.updatedAt,
  parentPageId: source.parentPageId
})

const pickMemory = (memory: ExportMemory): ExportMemory => ({
  id: memory.id,
  text: memory.text,
  createdAt: memory.createdAt,
  updatedAt: memory.updatedAt
})

const toJson = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`

const utf8Bytes = (text: string): number => Buffer.byteLength(text, "utf8")

const manifestOf = (
  knowledgebase: ExportKnowledgebase,
  counts: ExportManifest["counts"],
  files: ReadonlyArray<ExportManifestFile>
): ExportManifest => ({
  format: exportFormat,
  version: exportFormatVersion,
  knowledgebase: { id: knowledgebase.id, name: knowledgebase.name, description: knowledgebase.description },
  exportedAt: knowledgebase.exportedAt,
  counts,
  files
})

/** What {@link estimateExportBytes} needs of a page: its metadata and the size of its body. */
export interface ExportSizePage extends Omit<ExportPage, "markdown"> {
  /**
   * UTF-8 byte length of the body (`octet_length(markdown)`). When only the UTF-16
   * length is at hand, 3 × that length is still an upper bound. Ignored for folders.
   */
  readonly markdownBytes: number
}

/** Input of {@link estimateExportBytes}: the export input with page bodies replaced by their sizes. */
export interface ExportSizeInput {
  readonly knowledgebase: ExportKnowledgebase
  /** In tree order, as they will be exported. */
  readonly pages: Iterable<ExportSizePage>
  readonly sources: Iterable<ExportSource>
  readonly memories?: Iterable<ExportMemory> | undefined
}

/** Per manifest file line: indentation inside `files` and the separating comma, generously. */
const manifestLineSlack = 32
/** For the counts in the manifest skeleton and rounding. */
const manifestSlack = 256

/**
 * An upper bound, in bytes, of the uncompressed content of the archive (the sum of its files'
 * sizes; zip headers and compression are not counted). Pure. Exact for the front matter,
 * `sources.json` and `memories.json`; the body sizes are as given; every manifest path is bounded by
 * `pages/` plus one maximal name per level, so the bound holds whatever names collisions produce. The
 * caller refuses the export with `export_too_large` when this exceeds {@link maxExportBytes} (see
 * {@link isExportTooLarge}).
 */
export const estimateExportBytes = (input: ExportSizeInput): number => {
  const depths = new Map<string, number>()
  let total = 0
  let entries = 0
  for (const page of input.pages) {
    const parentDepth = page.parentPageId === null ? undefined : depths.get(page.parentPageId)
    const depth = (parentDepth ?? 0) + 1
    depths.set(page.id, depth)
    entries += 1
    if (!page.isFolder) total += utf8Bytes(renderFrontMatter(page)) + Math.max(0, page.markdownBytes)
    const pathBound = pagesRoot.length + depth * (maxNameBytes + 1)
    const line = JSON.stringify({ path: "", kind: page.isFolder ? "folder" : "page", id: page.id }, null, 2)
    total += utf8Bytes(line) + pathBound + manifestLineSlack
  }
  let sources = 0
  const sourceList: Array<ExportSource> = []
  for (const source of input.sources) {
    sourceList.push(pickSource(source))
    sources += 1
  }
  total += utf8Bytes(toJson(sourceList))
  let memories: number | undefined
  if (input.memories !== undefined) {
    const memoryList: Array<ExportMemory> = []
    for (const memory of input.memories) memoryList.push(pickMemory(memory))
    memories = memoryList.length
    total += utf8Bytes(toJson(memoryList))
  }
  const counts = { pages: entries, folders: entries, sources, ...(memories === undefined ? {} : { memories }) }
  total += utf8Bytes(toJson(manifestOf(input.knowledgebase, counts, []))) + manifestSlack
  return total
}

/** Whether an export of `bytes` (from {@link estimateExportBytes}) must be refused: above 50 MB. */
export const isExportTooLarge = (bytes: number): boolean => bytes > maxExportBytes

const minZipDate = Date.UTC(1980, 0, 1)
const maxZipDate = Date.UTC(2107, 11, 31)

/** A file timestamp yazl can write in DOS form: parsed, with invalid values replaced and the range clamped. */
const zipDate = (iso: string, fallback: Date): Date => {
  const time = Date.parse(iso)
  if (Number.isNaN(time)) return fallback
  return new Date(Math.min(Math.max(time, minZipDate), maxZipDate))
}

const toError = (cause: unknown): Error => (cause instanceof Error ? cause : new Error(String(cause)))

/** Everything the archive is made of, with the pages as an Effect stream read as the archive is written. */
export interface ExportStreamInput<E, R> {
  readonly knowledgebase: ExportKnowledgebase
  /** Live pages and folders in tree order (each parent before its children). */
  readonly pages: Stream.Stream<ExportPage, E, R>
  readonly sources: Iterable<ExportSource>
  /** Given only for a personal key; `memories.json` is written exactly when this is present. */
  readonly memories?: Iterable<ExportMemory> | undefined
}

/**
 * A yazl archive that heeds back-pressure: each file is handed over lazily, and {@link room} holds
 * the input back while too many files wait or the output is full. (yazl writes into its output
 * without heeding back-pressure itself.)
 */
const openArchive = (options: ExportArchiveOptions) => {
  const compressionLevel = options.compressionLevel ?? 6
  const maxPendingEntries = Math.max(1, options.maxPendingEntries ?? 4)
  const zip = new yazl.ZipFile()
  const output = zip.outputStream as PassThrough
  let queued = 0
  let started = 0
  let closed = false
  let wake: (() => void) | undefined
  const signal = (): void => {
    const resume = wake
    wake = undefined
    resume?.()
  }
  output.on("drain", signal)
  output.on("close", () => {
    closed = true
    signal()
  })
  zip.on("error", (error: unknown) => output.destroy(toError(error)))
  return {
    output,
    isClosed: () => closed,
    addFile: (path: string, text: string, mtime: Date): void => {
      const data = Buffer.from(text, "utf8")
      const index = queued++
      zip.addReadStreamLazy(path, { mtime, size: data.length, compressionLevel }, (callback) => {
        // yazl asks for an entry's data only once every earlier entry is fully written.
        started = index + 1
        signal()
        callback(null, new PassThrough().end(data))
      })
    },
    addDirectory: (path: string, mtime: Date): void => zip.addEmptyDirectory(path, { mtime }),
    /** Waits while too many files are pending or the output is full; false once the output is closed. */
    room: Effect.async<boolean>((resume) => {
      const check = (): void => {
        if (closed) resume(Effect.succeed(false))
        else if (queued - started > maxPendingEntries || output.writableNeedDrain) wake = check
        else resume(Effect.succeed(true))
      }
      check()
      return Effect.sync(() => {
        wake = undefined
      })
    }),
    end: (): void => {
      if (!closed) zip.end()
    },
    close: (): void => {
      if (!closed) output.destroy()
    }
  }
}

/**
 * The archive as an Effect stream of zip bytes, e.g. for `HttpServerResponse.stream(...)` with
 * {@link exportContentType}, built inside the program that runs it: the pages are pulled from
 * `input.pages` (in that program's context) only as fast as the bytes are consumed. A failure of
 * the page stream fails this stream with the same typed error; a zip failure is an
 * {@link ExportArchiveError}; interrupting this stream interrupts the page stream (closing whatever
 * reads it) and discards the archive.
 */
export const exportArchiveStream = <E, R>(
  input: ExportStreamInput<E, R>,
  options: ExportArchiveOptions = {}
): Stream.Stream<Uint8Array, E | ExportArchiveError, R> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const archive = yield* Effect.acquireRelease(
        Effect.sync(() => openArchive(options)),
        (opened) => Effect.sync(() => opened.close())
      )
      const exportedAt = zipDate(input.knowledgebase.exportedAt, new Date(minZipDate))
      const layout = new ExportLayout()
      const files: Array<ExportManifestFile> = []
      let pageCount = 0
      let folderCount = 0
      const writePage = (page: ExportPage) =>
        Effect.suspend(() => {
          const placed = layout.place(page)
          files.push({ path: placed.path, kind: placed.kind, id: page.id })
          const mtime = zipDate(page.updatedAt, exportedAt)
          if (placed.kind === "folder") {
            folderCount += 1
            archive.addDirectory(placed.path, mtime)
          } else {
            pageCount += 1
            archive.addFile(placed.path, renderPageFile(page), mtime)
          }
          return archive.room
        })
      const write = Effect.gen(function* () {
        yield* Stream.runForEachWhile(input.pages, writePage)
        if (archive.isClosed()) return
        const sources = Array.from(input.sources, pickSource)
        archive.addFile("sources.json", toJson(sources), exportedAt)
        const memories = input.memories === undefined ? undefined : Array.from(input.memories, pickMemory)
        if (memories !== undefined) archive.addFile("memories.json", toJson(memories), exportedAt)
        const counts = {
          pages: pageCount,
          folders: folderCount,
          sources: sources.length,
          ...(memories === undefined ? {} : { memories: memories.length })
        }
        archive.addFile("manifest.json", toJson(manifestOf(input.knowledgebase, counts, files)), exportedAt)
        archive.end()
      })
      const bytes = Stream.fromAsyncIterable<Uint8Array, ExportArchiveError>(
        archive.output,
        (cause) => new ExportArchiveError({ cause })
      )
      return Stream.merge(bytes, Stream.drain(Stream.fromEffect(write)))
    })
  )

/**
 * The archive as a Node `Readable` of zip bytes, from plain (or async) iterables: a thin adapter over
 * {@link exportArchiveStream}. Reading the input begins at once and advances only as the output is
 * consumed; an input failure destroys the stream with that error; destroying the stream stops the
 * input and closes its iterator.
 */
export const createExportArchive = (input: ExportInput, options: ExportArchiveOptions = {}): Readable => {
  const pages = input.pages
  const pageStream: Stream.Stream<ExportPage, unknown> =
    Symbol.asyncIterator in pages
      ? Stream.fromAsyncIterable(pages as AsyncIterable<ExportPage>, (cause) => cause)
      : Stream.fromIterable(pages as Iterable<ExportPage>)
  const stream = Stream.unwrap(
    Effect.map(
      Effect.all([collectAll(input.sources), input.memories === undefined ? Effect.succeed(undefined) : collectAll(input.memories)]),
      ([sources, memories]) =>
        exportArchiveStream({ knowledgebase: input.knowledgebase, pages: pageStream, sources, memories }, options).pipe(
          Stream.mapError((error) => (error instanceof ExportArchiveError ? error.cause : error))
        )
    )
  )
  const readable = Readable.from(Stream.toAsyncIterable(stream), { objectMode: false })
  readable.read(0)
  return readable
}

const collectAll = <A>(items: ExportIterable<A>): Effect.Effect<Array<A>, unknown> =>
  Symbol.asyncIterator in items
    ? Effect.tryPromise({
        try: async () => {
          const all: Array<A> = []
          for await (const item of items as AsyncIterable<A>) all.push(item)
          return all
        },
        catch: (cause) => cause
      })
    : Effect.succeed(Array.from(items as Iterable<A>))
