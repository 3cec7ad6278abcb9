/**
 * The Knowledgebase export archive writer (server/knowledge/export/archive.ts): safe names, collisions,
 * front matter, bodies byte for byte, manifest, sources and memories files, the size bound, and
 * streaming (output before the input is consumed, input closed when the output goes away).
 */
import { createWriteStream } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, posix, resolve, sep } from "node:path"
import type { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { Chunk, Context, Data, Effect, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import yauzl from "yauzl"
import { type ReadEntry, readZipBuffer, readZipFile } from "../support/zip.js"
import {
  collisionKey,
  createExportArchive,
  estimateExportBytes,
  type ExportInput,
  type ExportKnowledgebase,
  type ExportMemory,
  type ExportPage,
  type ExportSource,
  exportArchiveStream,
  ExportLayout,
  isExportTooLarge,
  maxExportBytes,
  maxNameBytes,
  safeName
} from "../../server/knowledge/export/archive.js"

// ---------------------------------------------------------------------------------------------------
// Sample data

const knowledgebase: ExportKnowledgebase = {
  id: "3f0a3a5e-8d4b-4b8e-9c59-2a8e0f7d1c11",
  name: "Support handbook",
  description: "How we answer customers.",
  exportedAt: "2026-11-21T10:00:00.000Z"
}

let serial = 0
const uuid = (): string => `00000000-0000-4000-8000-${String(++serial).padStart(12, "0")}`

interface SamplePage extends ExportPage {
  /** The path the writer must give this page. */
  readonly expected: string
}

const pages: Array<SamplePage> = []
const add = (
  title: string,
  parent: SamplePage | null,
  expected: string,
  extra: Partial<Pick<ExportPage, "isFolder" | "markdown" | "author" | "templateKey" | "parentPageId">> = {}
): SamplePage => {
  const isFolder = extra.isFolder ?? false
  const folderPath =
    parent === null ? [] : [...parent.path, ...(parent.isFolder ? [parent.title] : [])]
  const page: SamplePage = {
    id: uuid(),
    title,
    templateKey: extra.templateKey ?? (isFolder ? "folder" : "page"),
    isFolder,
    parentPageId: extra.parentPageId !== undefined ? extra.parentPageId : (parent?.id ?? null),
    path: folderPath,
    createdAt: `2026-01-${String((serial % 28) + 1).padStart(2, "0")}T08:00:00.000Z`,
    updatedAt: `2026-02-${String((serial % 28) + 1).padStart(2, "0")}T09:30:00.000Z`,
    author: extra.author !== undefined ? extra.author : serial % 3 === 0 ? null : `author${serial}@example.com`,
    markdown: extra.markdown ?? (isFolder ? "" : `# ${title}\n\nBody of page ${serial}.\n`),
    expected
  }
  pages.push(page)
  return page
}
const folder = (title: string, parent: SamplePage | null, expected: string) =>
  add(title, parent, expected, { isFolder: true })

const longX = "x".repeat(300)
const family = "👩‍👩‍👧‍👦" // 25 UTF-8 bytes, one grapheme
const trickyBody =
  "\uFEFF---\ntitle: not front matter\n---\r\nCRLF line\r\n\ttabs\u0000nul  trailing   \n" +
  "Emoji 🎉👩‍👩‍👧‍👦, accents é (NFC) e\u0301 (NFD), CJK 漢字, RTL שלום\n\n```\ncode\n```\n"

// Three folder levels, pages with children, duplicates differing in case, hostile titles.
const projects = folder("Projects", null, "pages/Projects/")
const y2026 = folder("2026", projects, "pages/Projects/2026/")
const q1 = folder("Q1", y2026, "pages/Projects/2026/Q1/")
add("Plan", q1, "pages/Projects/2026/Q1/Plan.md", { markdown: trickyBody })
const roadmap = add("Roadmap", y2026, "pages/Projects/2026/Roadmap.md")
const milestones = add("Milestones", roadmap, "pages/Projects/2026/Roadmap/Milestones.md")
add("Details", milestones, "pages/Projects/2026/Roadmap/Milestones/Details.md", { markdown: "" })
add("Roadmap", y2026, "pages/Projects/2026/Roadmap (2).md")
add("notes", projects, "pages/Projects/notes.md")
add("Notes", projects, "pages/Projects/Notes (2).md")
add("NOTES", projects, "pages/Projects/NOTES (3).md")
const notesFolder = folder("Notes", projects, "pages/Projects/Notes (4)/")
add("notes", notesFolder, "pages/Projects/Notes (4)/notes.md")
add("Notes (2)", projects, "pages/Projects/Notes (2) (2).md")
add("Café", projects, "pages/Projects/Café.md") // NFC
add("Cafe\u0301", projects, "pages/Projects/Café (2).md") // NFD of the same name
const passwd = add("../../etc/passwd", null, "pages/_.._etc_passwd.md")
add("child of passwd", passwd, "pages/_.._etc_passwd/child of passwd.md")
add("/etc/shadow", null, "pages/_etc_shadow.md")
add("C:\\Windows\\system32", null, "pages/C__Windows_system32.md")
add("CON", null, "pages/CON_.md", { markdown: "device name" })
add("con.txt", null, "pages/con_.txt.md")
add("LPT9", null, "pages/LPT9_.md")
add("nul ", null, "pages/nul_.md")
folder("AUX", null, "pages/AUX_/")
add("a/b\\c", null, "pages/a_b_c.md")
add('what? <yes> | "no" * : maybe', null, "pages/what_ _yes_ _ _no_ _ _ maybe.md")
add("tab\there\nnewline\u0007bell", null, "pages/tab here newline_bell.md")
add("  .hidden. ", null, "pages/hidden.md")
add("trailing dots...", null, "pages/trailing dots.md")
add("Party 🎉 time 👩‍👩‍👧‍👦", null, "pages/Party 🎉 time 👩‍👩‍👧‍👦.md", { markdown: trickyBody })
add(longX, null, `pages/${"x".repeat(maxNameBytes - 3)}.md`)
add(longX, null, `pages/${"x".repeat(maxNameBytes - 3 - 4)} (2).md`)
add(family.repeat(20), null, `pages/${family.repeat(3)}.md`)
add("", null, "pages/untitled.md", { markdown: "nameless" })
add("   ", null, "pages/untitled (2).md")
add("..", null, "pages/untitled (3).md")
add("---\ninjected: true\n...", null, "pages/--- injected_ true.md", { author: null })
add("orphan", null, "pages/orphan.md", { parentPageId: "ffffffff-ffff-4fff-8fff-ffffffffffff" })
const empty = folder("Empty folder", null, "pages/Empty folder/")
void empty

const sources: Array<ExportSource> = [
  {
    id: uuid(),
    name: "Manual.pdf",
    type: "pdf",
    status: "ready",
    sizeBytes: 123_456,
    createdAt: "2026-03-01T00:00:00.000Z",
    updatedAt: "2026-03-02T00:00:00.000Z",
    parentPageId: projects.id
  },
  {
    id: uuid(),
    name: "notes.txt",
    type: "txt",
    status: "processing",
    sizeBytes: 42,
    createdAt: "2026-03-03T00:00:00.000Z",
    updatedAt: "2026-03-03T00:00:00.000Z",
    parentPageId: null
  }
]
// What a careless caller might pass: whole rows with bodies. None of it may reach the archive.
const sourceRows = sources.map((source) => ({
  ...source,
  content: "SECRET-SOURCE-BODY",
  contentMarkdown: "SECRET-SOURCE-BODY",
  searchable: true
}))

const memories: Array<ExportMemory> = [
  { id: uuid(), text: "Prefers short answers.", createdAt: "2026-04-01T00:00:00.000Z", updatedAt: "2026-04-01T00:00:00.000Z" },
  { id: uuid(), text: "Works on the Q1 plan 🎯", createdAt: "2026-04-02T00:00:00.000Z", updatedAt: "2026-04-03T00:00:00.000Z" }
]

// ---------------------------------------------------------------------------------------------------
// Helpers

const collect = async (readable: Readable): Promise<Buffer> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of readable) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

const inputOf = (withMemories: boolean): ExportInput => ({
  knowledgebase,
  pages: (async function* () {
    for (const page of pages) yield page
  })(),
  sources: sourceRows,
  ...(withMemories ? { memories } : {})
})

const byName = (entries: ReadonlyArray<ReadEntry>): Map<string, ReadEntry> =>
  new Map(entries.map((entry) => [entry.name, entry]))

const json = (entry: ReadEntry | undefined): unknown => {
  expect(entry).toBeDefined()
  return JSON.parse(entry!.data.toString("utf8"))
}

/** Splits a page file into its front matter (parsed) and its body bytes. */
const splitPage = (data: Buffer): { frontMatter: unknown; body: Buffer } => {
  const open = Buffer.from("---\n")
  const close = Buffer.from("\n---\n")
  expect(data.subarray(0, open.length).equals(open)).toBe(true)
  const end = data.indexOf(close, open.length - 1)
  expect(end).toBeGreaterThan(0)
  return {
    frontMatter: parse(data.subarray(open.length, end + 1).toString("utf8")),
    body: data.subarray(end + close.length)
  }
}

const invalidCharacters = /[<>:"/\\|?*\u0000-\u001f\u007f-\u009f]/
const deviceName = /^(con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³])$/i

const expectSafeSegment = (segment: string): void => {
  expect(segment.length, "empty segment").toBeGreaterThan(0)
  expect(segment).not.toBe(".")
  expect(segment).not.toBe("..")
  expect(segment).not.toMatch(invalidCharacters)
  expect(segment).not.toMatch(/^[\s.]|[\s.]$/u)
  expect(Buffer.byteLength(segment)).toBeLessThanOrEqual(maxNameBytes)
  const dot = segment.indexOf(".")
  expect((dot === -1 ? segment : segment.slice(0, dot)).trimEnd()).not.toMatch(deviceName)
  expect(segment).toBe(segment.normalize("NFC"))
  expect(segment).toBe(Buffer.from(segment, "utf8").toString("utf8")) // well-formed
}

// ---------------------------------------------------------------------------------------------------
// Tests

describe("safeName", () => {
  it.each([
    ["Notes", {}, "Notes"],
    ["Notes", { extension: ".md" }, "Notes.md"],
    ["Notes", { extension: ".md", ordinal: 2 }, "Notes (2).md"],
    ["../../etc/passwd", {}, "_.._etc_passwd"],
    ["..", {}, "untitled"],
    [".", {}, "untitled"],
    ["", { extension: ".md" }, "untitled.md"],
    ["", { extension: ".md", ordinal: 3 }, "untitled (3).md"],
    [" \t ", {}, "untitled"],
    ["a/b\\c", {}, "a_b_c"],
    ['<>:"/\\|?*', {}, "_________"],
    ["CON", {}, "CON_"],
    ["con", { extension: ".md" }, "con_.md"],
    ["CON", { ordinal: 2 }, "CON (2)"],
    ["Com1.txt", {}, "Com1_.txt"],
    ["LPT¹", {}, "LPT¹_"],
    ["CONSOLE", {}, "CONSOLE"],
    ["nul .tar.gz", {}, "nul _.tar.gz"],
    ["e\u0301", {}, "é"],
    ["lone \uD800 surrogate", {}, "lone \uFFFD surrogate"],
    ["C:\\", {}, "C__"]
  ] as const)("%j %j -> %j", (title, options, expected) => {
    expect(safeName(title, options)).toBe(expected)
  })

  it("caps names at 100 UTF-8 bytes on grapheme boundaries, suffix and extension included", () => {
    expect(safeName("é".repeat(80))).toBe("é".repeat(50))
    expect(Buffer.byteLength(safeName("é".repeat(80), { extension: ".md" }))).toBe(99) // 48 × 2 + 3
    expect(safeName(family.repeat(10), { extension: ".md", ordinal: 12 })).toBe(`${family.repeat(3)} (12).md`)
    expect(safeName("a".repeat(200), { ordinal: 7 })).toBe(`${"a".repeat(96)} (7)`)
    // A cut that would end in a dot or space is trimmed.
    expect(safeName(`${"a".repeat(98)} .b`)).toBe("a".repeat(98))
    // One grapheme longer than the cap is cut by code point rather than dropped.
    const zalgo = `z${"\u0301".repeat(120)}`
    expect(safeName(zalgo)).toBe(`z${"\u0301".repeat(50)}`.normalize("NFC")) // ź (2 bytes) + 49 marks
    // A device name near the cap still gets its underscore and stays within the cap.
    const longDevice = safeName(`CON.${"t".repeat(200)}`, { extension: ".md" })
    expect(longDevice.startsWith("CON_.")).toBe(true)
    expect(Buffer.byteLength(longDevice)).toBeLessThanOrEqual(maxNameBytes)
  })

  it("folds case and Unicode normalization for collisions", () => {
    expect(collisionKey("NOTES.md")).toBe(collisionKey("notes.MD"))
    expect(collisionKey("Café")).toBe(collisionKey("CAFE\u0301"))
  })
})

describe("ExportLayout", () => {
  it("keeps a page's child directory from being taken by a later sibling", () => {
    const layout = new ExportLayout()
    const page = layout.place({ id: "p", title: "Guide", isFolder: false, parentPageId: null })
    const sibling = layout.place({ id: "f", title: "guide", isFolder: true, parentPageId: null })
    const child = layout.place({ id: "c", title: "Step", isFolder: false, parentPageId: "p" })
    expect(page.path).toBe("pages/Guide.md")
    expect(sibling.path).toBe("pages/guide (2)/")
    expect(child.path).toBe("pages/Guide/Step.md")
    expect(child.depth).toBe(2)
  })

  it("gives a folder named like a page file its own name", () => {
    const layout = new ExportLayout()
    expect(layout.place({ id: "p", title: "x", isFolder: false, parentPageId: null }).path).toBe("pages/x.md")
    expect(layout.place({ id: "f", title: "X.MD", isFolder: true, parentPageId: null }).path).toBe("pages/X.MD (2)/")
  })
})

describe("export archive", () => {
  let dir: string
  let entries: Array<ReadEntry>
  let names: Map<string, ReadEntry>

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-export-"))
    const file = join(dir, "export.zip")
    await pipeline(createExportArchive(inputOf(false)), createWriteStream(file))
    entries = await readZipFile(file)
    names = byName(entries)
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it("contains exactly the pages, folders, sources.json and manifest.json", () => {
    const expected = [...pages.map((page) => page.expected), "sources.json", "manifest.json"]
    expect(entries.map((entry) => entry.name)).toEqual(expected)
    expect(names.has("memories.json")).toBe(false)
  })

  it("gives every entry a safe name that stays inside the archive", () => {
    const root = resolve(dir, "extract")
    for (const { name, isDirectory } of entries) {
      expect(yauzl.validateFileName(name)).toBeNull()
      expect(name.startsWith("/")).toBe(false)
      expect(name).not.toMatch(/^[a-zA-Z]:/)
      expect(name).not.toContain("\\")
      const segments = (isDirectory ? name.slice(0, -1) : name).split("/")
      for (const segment of segments) expectSafeSegment(segment)
      const target = resolve(root, ...segments)
      expect(target.startsWith(root + sep)).toBe(true)
      if (!["sources.json", "manifest.json", "memories.json"].includes(name)) {
        expect(name.startsWith("pages/")).toBe(true)
        expect(target.startsWith(resolve(root, "pages") + sep)).toBe(true)
        expect(posix.normalize(name)).toBe(name)
      }
    }
  })

  it("resolves collisions case-insensitively inside each directory", () => {
    // Every name (file or directory, explicit or implied by a deeper path) is unique per directory.
    const seen = new Map<string, Map<string, string>>()
    const claim = (directory: string, name: string) => {
      const inDirectory = seen.get(directory) ?? new Map<string, string>()
      seen.set(directory, inDirectory)
      const previous = inDirectory.get(collisionKey(name))
      if (previous !== undefined) expect(previous).toBe(name)
      inDirectory.set(collisionKey(name), name)
    }
    for (const { name } of entries) {
      const segments = name.split("/").filter((segment) => segment !== "")
      segments.forEach((segment, index) => claim(segments.slice(0, index).join("/"), segment))
    }
    const projectsDirectory = [...(seen.get("pages/Projects")?.values() ?? [])]
    expect(projectsDirectory).toEqual(
      expect.arrayContaining(["notes.md", "Notes (2).md", "NOTES (3).md", "Notes (4)", "Notes (2) (2).md"])
    )
  })

  it("writes each page with parseable front matter and its body byte for byte", () => {
    for (const page of pages.filter((candidate) => !candidate.isFolder)) {
      const entry = names.get(page.expected)
      expect(entry, page.expected).toBeDefined()
      const { body, frontMatter } = splitPage(entry!.data)
      expect(frontMatter).toEqual({
        id: page.id,
        title: page.title,
        template: page.templateKey,
        path: page.path,
        created: page.createdAt,
        updated: page.updatedAt,
        author: page.author
      })
      expect(body.equals(Buffer.from(page.markdown, "utf8")), page.expected).toBe(true)
    }
  })

  it("writes folders as directory entries, including empty ones", () => {
    for (const page of pages.filter((candidate) => candidate.isFolder)) {
      const entry = names.get(page.expected)
      expect(entry?.isDirectory, page.expected).toBe(true)
      expect(entry?.data.length).toBe(0)
    }
    expect(names.get("pages/Empty folder/")?.isDirectory).toBe(true)
  })

  it("writes a manifest that matches the archive", () => {
    const folders = pages.filter((page) => page.isFolder)
    expect(json(names.get("manifest.json"))).toEqual({
      format: "svc-knowledgebase-export",
      version: 1,
      knowledgebase: { id: knowledgebase.id, name: knowledgebase.name, description: knowledgebase.description },
      exportedAt: knowledgebase.exportedAt,
      counts: { pages: pages.length - folders.length, folders: folders.length, sources: sources.length },
      files: pages.map((page) => ({ path: page.expected, kind: page.isFolder ? "folder" : "page", id: page.id }))
    })
    const manifest = json(names.get("manifest.json")) as { files: Array<{ path: string }> }
    for (const file of manifest.files) expect(names.has(file.path), file.path).toBe(true)
  })

  it("writes sources.json with metadata only, never bodies", () => {
    expect(json(names.get("sources.json"))).toEqual(sources)
    for (const source of json(names.get("sources.json")) as Array<Record<string, unknown>>) {
      expect(Object.keys(source).sort()).toEqual(
        ["createdAt", "id", "name", "parentPageId", "sizeBytes", "status", "type", "updatedAt"]
      )
    }
    for (const entry of entries) expect(entry.data.includes("SECRET-SOURCE-BODY")).toBe(false)
  })

  it("adds memories.json only when memories are given", async () => {
    const withMemories = byName(await readZipBuffer(await collect(createExportArchive(inputOf(true)))))
    expect(json(withMemories.get("memories.json"))).toEqual(memories)
    const manifest = json(withMemories.get("manifest.json")) as { counts: Record<string, number> }
    expect(manifest.counts).toEqual({
      pages: pages.filter((page) => !page.isFolder).length,
      folders: pages.filter((page) => page.isFolder).length,
      sources: 2,
      memories: 2
    })
    const emptyMemories = byName(
      await readZipBuffer(await collect(createExportArchive({ ...inputOf(false), memories: [] })))
    )
    expect(json(emptyMemories.get("memories.json"))).toEqual([])
    expect((json(emptyMemories.get("manifest.json")) as { counts: Record<string, number> }).counts.memories).toBe(0)
  })

  it("produces the same archive content for the same input", async () => {
    const again = await readZipBuffer(await collect(createExportArchive(inputOf(false), { compressionLevel: 0 })))
    expect(again.map((entry) => entry.name)).toEqual(entries.map((entry) => entry.name))
    again.forEach((entry, index) => expect(entry.data.equals(entries[index]!.data)).toBe(true))
  })

  it("exports an empty Knowledgebase", async () => {
    const empty = byName(
      await readZipBuffer(await collect(createExportArchive({ knowledgebase, pages: [], sources: [] })))
    )
    expect([...empty.keys()]).toEqual(["sources.json", "manifest.json"])
    expect(json(empty.get("sources.json"))).toEqual([])
    expect((json(empty.get("manifest.json")) as { files: unknown[] }).files).toEqual([])
  })
})

describe("export size", () => {
  const sizeInput = (withMemories: boolean) => ({
    knowledgebase,
    pages: pages.map(({ markdown, expected: _expected, ...rest }) => ({
      ...rest,
      markdownBytes: Buffer.byteLength(markdown)
    })),
    sources: sourceRows,
    ...(withMemories ? { memories } : {})
  })

  it("is an upper bound of the archive's uncompressed content, and not a loose one", async () => {
    for (const withMemories of [false, true]) {
      const archive = await readZipBuffer(await collect(createExportArchive(inputOf(withMemories))))
      const actual = archive.reduce((sum, entry) => sum + entry.data.length, 0)
      const estimate = estimateExportBytes(sizeInput(withMemories))
      expect(estimate).toBeGreaterThanOrEqual(actual)
      // Slack is a bounded amount per manifest line (the longest possible path), nothing more.
      expect(estimate - actual).toBeLessThan(pages.length * (4 * (maxNameBytes + 1) + 64) + 512)
    }
  })

  it("counts body bytes, so a Knowledgebase of large pages crosses the 50 MB cap", () => {
    expect(maxExportBytes).toBe(50_000_000)
    const page = { ...sizeInput(false).pages[3]!, markdownBytes: 256_000 }
    const many = Array.from({ length: 190 }, (_, index) => ({ ...page, id: `id-${index}` }))
    const under = estimateExportBytes({ knowledgebase, pages: many, sources: [] })
    expect(under).toBeGreaterThan(190 * 256_000)
    expect(isExportTooLarge(under)).toBe(false)
    const over = estimateExportBytes({
      knowledgebase,
      pages: Array.from({ length: 196 }, (_, index) => ({ ...page, id: `id-${index}` })).concat(
        Array.from({ length: 1 }, () => ({ ...page, id: "big", markdownBytes: 50_000_000 }))
      ),
      sources: []
    })
    expect(isExportTooLarge(over)).toBe(true)
    expect(isExportTooLarge(maxExportBytes)).toBe(false)
    expect(isExportTooLarge(maxExportBytes + 1)).toBe(true)
  })
})

describe("streaming", () => {
  /** Deterministic text that deflate cannot shrink much, so every page weighs on the output. */
  const noise = (seed: number, bytes: number): string => {
    const buffer = Buffer.alloc(Math.ceil((bytes * 3) / 4))
    let state = (seed + 1) * 2_654_435_761
    for (let offset = 0; offset < buffer.length; offset++) {
      state ^= state << 13
      state ^= state >>> 17
      state ^= state << 5
      buffer[offset] = state & 0xff
    }
    return buffer.toString("base64")
  }
  const bigPage = (index: number): ExportPage => ({
    id: `00000000-0000-4000-9000-${String(index).padStart(12, "0")}`,
    title: `Page ${index}`,
    templateKey: "page",
    isFolder: false,
    parentPageId: null,
    path: [],
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
    author: null,
    markdown: `# Page ${index}\n\n${noise(index, 24_000)}\n`
  })

  it("emits the first bytes before the page input is consumed", async () => {
    const total = 200
    let pulled = 0
    let finished = false
    let releaseInput: () => void = () => undefined
    const firstBytesSeen = new Promise<void>((resolve) => {
      releaseInput = resolve
    })
    const input: ExportInput = {
      knowledgebase,
      pages: (async function* () {
        for (let index = 0; index < total; index++) {
          // Past page 20 the input waits for the consumer to have seen output: a writer that
          // buffered the whole input before writing would stall here (and the test would time out).
          if (index === 20) await firstBytesSeen
          pulled += 1
          yield bigPage(index)
        }
        finished = true
      })(),
      sources: []
    }
    const readable = createExportArchive(input)
    const chunks: Array<Buffer> = []
    let pulledAtFirstChunk = -1
    for await (const chunk of readable) {
      if (pulledAtFirstChunk === -1) {
        pulledAtFirstChunk = pulled
        expect(finished).toBe(false)
        expect(chunk.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))).toBe(true) // local file header
        releaseInput()
      }
      chunks.push(chunk as Buffer)
    }
    expect(pulledAtFirstChunk).toBeGreaterThan(0)
    expect(pulledAtFirstChunk).toBeLessThan(total)
    expect(finished).toBe(true)
    const archive = await readZipBuffer(Buffer.concat(chunks))
    expect(archive.filter((entry) => entry.name.startsWith("pages/"))).toHaveLength(total)
  })

  it("pauses reading the input while the output is not consumed", async () => {
    let pulled = 0
    const readable = createExportArchive({
      knowledgebase,
      pages: (async function* () {
        for (let index = 0; index < 200; index++) {
          pulled += 1
          yield bigPage(index)
        }
      })(),
      sources: []
    })
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(pulled).toBeGreaterThan(0)
    expect(pulled).toBeLessThan(20)
    const archive = await readZipBuffer(await collect(readable))
    expect(archive.filter((entry) => entry.name.startsWith("pages/"))).toHaveLength(200)
  })

  it("stops and closes the input when the reader goes away", async () => {
    let pulled = 0
    let closed = false
    const readable = createExportArchive({
      knowledgebase,
      pages: (async function* () {
        try {
          for (let index = 0; index < 10_000; index++) {
            pulled += 1
            yield bigPage(index)
          }
        } finally {
          closed = true
        }
      })(),
      sources: []
    })
    for await (const _chunk of readable) break // destroys the stream
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(closed).toBe(true)
    expect(pulled).toBeLessThan(100)
  })

  it("fails the stream when the input fails", async () => {
    const readable = createExportArchive({
      knowledgebase,
      pages: (async function* () {
        yield bigPage(0)
        throw new Error("database went away")
      })(),
      sources: []
    })
    await expect(collect(readable)).rejects.toThrow("database went away")
  })

  it("is available as an Effect stream, the pages read from an Effect stream", async () => {
    const bytes = await Effect.runPromise(
      Stream.runCollect(exportArchiveStream({ knowledgebase, pages: Stream.fromIterable(pages), sources: sourceRows, memories })).pipe(
        Effect.map((chunks) => Buffer.concat(Chunk.toArray(chunks)))
      )
    )
    const archive = byName(await readZipBuffer(bytes))
    expect(archive.has("memories.json")).toBe(true)
    expect([...archive.keys()].filter((name) => name.startsWith("pages/"))).toHaveLength(pages.length)
  })

  it("pulls the pages (with their services) only as fast as the bytes are consumed", async () => {
    class BodyStore extends Context.Tag("BodyStore")<BodyStore, { readonly read: (index: number) => Effect.Effect<string> }>() {}
    let pulled = 0
    const pageStream = Stream.mapEffect(Stream.range(0, 199), (index) =>
      Effect.flatMap(BodyStore, (store) => Effect.map(store.read(index), (markdown) => ({ ...bigPage(index), markdown })))
    ).pipe(Stream.tap(() => Effect.sync(() => pulled++)))
    const store = BodyStore.of({ read: (index) => Effect.succeed(bigPage(index).markdown) })
    const first = await Effect.runPromise(
      Stream.runCollect(Stream.take(exportArchiveStream({ knowledgebase, pages: pageStream, sources: [] }), 1)).pipe(
        Effect.provideService(BodyStore, store)
      )
    )
    expect(Chunk.size(first)).toBe(1)
    expect(pulled).toBeGreaterThan(0)
    expect(pulled).toBeLessThan(40)
    const whole = await Effect.runPromise(
      Stream.runCollect(exportArchiveStream({ knowledgebase, pages: pageStream, sources: [] })).pipe(
        Effect.map((chunks) => Buffer.concat(Chunk.toArray(chunks))),
        Effect.provideService(BodyStore, store)
      )
    )
    expect((await readZipBuffer(whole)).filter((entry) => entry.name.startsWith("pages/"))).toHaveLength(200)
  })

  it("interrupting the Effect stream interrupts the page stream and runs its finalizers", async () => {
    let released = false
    let pulled = 0
    const pageStream = Stream.scoped(
      Effect.acquireRelease(Effect.succeed("cursor"), () => Effect.sync(() => (released = true)))
    ).pipe(
      Stream.flatMap(() => Stream.range(0, 9_999)),
      Stream.mapEffect((index) =>
        Effect.sync(() => {
          pulled++
          return bigPage(index)
        })
      )
    )
    const first = await Effect.runPromise(Stream.runCollect(Stream.take(exportArchiveStream({ knowledgebase, pages: pageStream, sources: [] }), 1)))
    expect(Chunk.size(first)).toBe(1)
    expect(released).toBe(true)
    expect(pulled).toBeLessThan(100)
  })

  it("fails with the page stream's own typed error; nothing of the input escapes as a defect", async () => {
    class ReadFailed extends Data.TaggedError("ReadFailed")<{ readonly pageId: string }> {}
    const failing = Stream.concat(Stream.make(bigPage(0)), Stream.fail(new ReadFailed({ pageId: "p1" })))
    const exit = await Effect.runPromise(
      Stream.runDrain(exportArchiveStream({ knowledgebase, pages: failing, sources: [] })).pipe(Effect.either)
    )
    expect(exit._tag).toBe("Left")
    if (exit._tag === "Left") expect(exit.left).toEqual(new ReadFailed({ pageId: "p1" }))
  })
})
