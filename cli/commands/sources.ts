/** `svc sources upload`: uploads a file to a Knowledgebase through the API, optionally waiting until it is indexed. */
import { type Command, Option } from "commander"
import { readFile } from "node:fs/promises"
import { basename } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import type { SourcesGetResponse, Svc } from "../../sdk/index.js"
import { type ApiOptions, withApi, withClient } from "../api.js"
import { describe, failure } from "../errors.js"
import { parsePositive } from "../options.js"
import { output } from "../output.js"
import { type Progress, startProgress } from "../progress.js"
import { type Block, byteSize, shortTime, type Tone } from "../ui/blocks.js"
import type { CliIo } from "../io.js"

/** A source as the API answers it. */
export type Source = SourcesGetResponse["source"]

interface UploadOptions extends ApiOptions {
  readonly name?: string
  readonly folder?: string
  readonly wait?: boolean
  readonly pollInterval?: number
}

/** What `sources upload` ends with. */
interface Uploaded {
  readonly source: Source
  readonly reviewPath: string | null
  /** The organization already held these bytes: `source` is that document, under its own name. */
  readonly deduplicated: boolean
  /** The name the upload asked for (`--name`, else the file's name). */
  readonly requestedName: string
}

/** The line saying an upload found its bytes already stored as a document. */
export const alreadyStored = (source: Source, requestedName: string): string =>
  source.name === requestedName
    ? `These bytes were already a document (${source.name}); that document is answered, not a new one.`
    : `These bytes were already a document named ${source.name}; that document is answered under its name, not as ${requestedName}.`

/** The labelled fields of a source, for people. */
export const sourceFields = (source: Source, reviewPath: string | null = null): Block => ({
  kind: "fields",
  rows: [
    ["id", source.id],
    ["name", source.name],
    ["type", source.type],
    ["status", source.status],
    ["searchable", source.searchable ? "yes" : "no"],
    ["size", byteSize(source.sizeBytes)],
    ["folder", source.parentPageId ?? "none (unfiled)"],
    ["created", shortTime(source.createdAt)],
    ["updated", shortTime(source.updatedAt)],
    ...(source.errorMessage === null ? [] : [["error", source.errorMessage] as const]),
    ...(reviewPath === null ? [] : [["review", reviewPath] as const])
  ]
})

const headline = (source: Source, deduplicated: boolean): { text: string; tone: Tone } => {
  if (deduplicated) return { text: `Already uploaded as ${source.name}: ${source.status.replace("_", " ")}`, tone: "info" }
  switch (source.status) {
    case "ready":
      return { text: `Uploaded ${source.name}: ready and searchable`, tone: "success" }
    case "failed":
      return { text: `Uploaded ${source.name}, but indexing failed`, tone: "warning" }
    case "pending_review":
      return { text: `Uploaded ${source.name}: waiting for review before it is indexed`, tone: "info" }
    case "processing":
      return { text: `Uploaded ${source.name}: indexing`, tone: "info" }
  }
}

/** Polls the source until it leaves `processing`, showing a spinner (or plain lines). */
const waitForIndexing = async (client: Svc, knowledgebaseId: string, first: Source, progress: Progress, intervalMs: number) => {
  let source = first
  while (source.status === "processing") {
    progress.wait(`indexing ${source.name} (source ${source.id})`)
    await sleep(intervalMs)
    source = (await client.sources.get(knowledgebaseId, source.id)).source
  }
  if (source.status === "ready") progress.step(`indexed ${source.name}: ready`)
  else if (source.status === "failed") progress.step(`indexing ${source.name} failed`, "warning")
  return source
}

const upload = async (io: CliIo, knowledgebaseId: string, file: string, options: UploadOptions) => {
  const uploaded = await withClient(io, options, async (client): Promise<Uploaded> => {
    const bytes = await readFile(file).catch((error: unknown) => {
      throw failure(`cannot read ${file}: ${describe(error)}`)
    })
    const fileName = basename(file)
    const progress = await startProgress(io, options)
    try {
      const created = await client.sources.upload(
        knowledgebaseId,
        { file: bytes, fileName, name: options.name, parentPageId: options.folder },
        { onProgress: ({ sent, total }) => progress.upload(fileName, sent, total) }
      )
      progress.step(`uploaded ${fileName} (${byteSize(bytes.byteLength)})`)
      const requestedName = options.name ?? fileName
      if (created.source.status === "pending_review") progress.step("the organization reviews uploads: it is indexed once approved", "info")
      const source = options.wait
        ? await waitForIndexing(client, knowledgebaseId, created.source, progress, options.pollInterval ?? 500)
        : created.source
      return { source, reviewPath: created.reviewPath, deduplicated: created.deduplicated, requestedName }
    } finally {
      progress.stop()
    }
  })
  await output(io, options, uploaded, {
    json: ({ source, reviewPath, deduplicated }) => ({ source, status: source.status, reviewPath, deduplicated }),
    human: ({ source, reviewPath, deduplicated, requestedName }) => [
      { kind: "title", ...headline(source, deduplicated) },
      ...(deduplicated ? [{ kind: "note", text: alreadyStored(source, requestedName) } as const] : []),
      sourceFields(source, reviewPath),
      ...(source.status === "processing" && !options.wait
        ? [{ kind: "note", text: "Indexing goes on in the background; add --wait to follow it." } as const]
        : [])
    ]
  })
  if (uploaded.source.status === "failed") {
    throw failure(`source ${uploaded.source.id} failed: ${uploaded.source.errorMessage ?? "no reason given"}`)
  }
}

/** Registers `svc sources`. */
export const sourcesCommands = (program: Command, io: CliIo): void => {
  const sources = program.command("sources").description("documents of a Knowledgebase, through the API")
  withApi(
    sources
      .command("upload")
      .description("upload a PDF, CSV, TXT or MD file (within 4.5 MB) to a Knowledgebase")
      .argument("<knowledgebase-id>", "the Knowledgebase")
      .argument("<file>", "the file to upload")
      .option("--name <name>", "the source's name (default: the file's name)")
      .option("--folder <page-id>", "file it under this folder or page of the Knowledgebase")
      .option("--wait", "wait until it is indexed (ready) or failed; exit 1 when it failed")
      .addOption(
        new Option("--poll-interval <ms>", "milliseconds between status checks with --wait (default: 500)").argParser(parsePositive).hideHelp()
      )
  ).action((id: string, file: string, options: UploadOptions) => upload(io, id, file, options))
}
