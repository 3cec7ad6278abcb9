/**
 * `svc serve`: runs the API server on a data directory until SIGINT or SIGTERM, then lets in-flight
 * requests finish, closes the database and exits 0 (a second signal quits at once with 130, see main.ts).
 */
import type { Command } from "commander"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { RunningServer } from "../../server/server.js"
import { type CliError, describe, errnoCode, failure, usage } from "../errors.js"
import { type DataDirOptions, parseList, parsePort, parsePositive, parseRetryDelays, resolveDatabase, resolveDataDir, withDataDir } from "../options.js"
import { removeServerRecord, writeServerRecord } from "../server-file.js"
import { output, progress } from "../output.js"
import type { Block } from "../ui/blocks.js"
import type { CliIo } from "../io.js"
import { isPending, lostKeyNotice, recordPending, recordShown } from "./bootstrap-key.js"

interface ServeOptions extends DataDirOptions {
  readonly host?: string
  readonly port?: number
  readonly allowPrivateUrls?: boolean
  readonly demo?: boolean
  readonly webhookRetryDelays?: [number, number, number]
  readonly quiet?: boolean
  readonly ephemeral?: boolean
  readonly rateLimit?: number
  readonly model?: string
  readonly embeddingModel?: string
  readonly allowedOrigins?: string
  readonly otelEndpoint?: string
}

/**
 * The allowed origins: `--allowed-origins`, else `SVC_ALLOWED_ORIGINS`, else none; each entry
 * serialized (`parseAllowedOrigin`), a bad one a usage error (exit 2) naming where it came from.
 * Read before anything starts; the rule is loaded with the server, not at the CLI's start-up.
 */
const allowedOriginsOf = async (io: CliIo, options: ServeOptions): Promise<ReadonlyArray<string>> => {
  const [source, list] = options.allowedOrigins !== undefined ? ["--allowed-origins", options.allowedOrigins] : ["SVC_ALLOWED_ORIGINS", io.env.SVC_ALLOWED_ORIGINS ?? ""]
  const { parseAllowedOrigin } = await import("../../server/http/origin-policy.js")
  return parseList(list).map((entry) => {
    const origin = parseAllowedOrigin(entry)
    if (origin === null) throw usage(`${source}: '${entry}' is not an origin: write each as scheme://host[:port] with http or https and nothing after the host, comma-separated.`)
    return origin
  })
}

/**
 * The OpenTelemetry collector to export traces to: `--otel-endpoint`, else `SVC_OTEL_ENDPOINT`,
 * else none (blank is none too); one that is not an http or https URL is a usage error (exit 2)
 * naming where it came from, before anything starts or is created.
 */
const otelEndpointOf = (io: CliIo, options: ServeOptions): string | undefined => {
  const [source, value] = options.otelEndpoint !== undefined ? ["--otel-endpoint", options.otelEndpoint] : ["SVC_OTEL_ENDPOINT", io.env.SVC_OTEL_ENDPOINT ?? ""]
  const endpoint = value.trim()
  if (endpoint === "") return undefined
  let protocol = ""
  try {
    protocol = new URL(endpoint).protocol
  } catch {
    // Not a URL at all: refused below like one of another scheme.
  }
  if (protocol !== "http:" && protocol !== "https:") {
    throw usage(`${source}: '${endpoint}' is not an http or https URL: write the collector's address, e.g. http://127.0.0.1:4318 (or its traces URL, ending in /v1/traces).`)
  }
  return endpoint
}

/** The ready line of `svc serve --json`. */
export const readyJson = (server: RunningServer) => ({
  baseUrl: server.baseUrl,
  mcpUrl: server.mcpUrl,
  dataDir: server.dataDir,
  organization: server.organization && { id: server.organization.id, slug: server.organization.slug },
  bootstrapKey: server.bootstrapKey,
  demo: server.demo
})

/** The banner for people; `lostKey` adds how to get a key when the bootstrap key was never shown, `database` is the PostgreSQL URL already masked. */
const banner = (server: RunningServer, lostKey: string | null, options: ServeOptions, database: string | undefined, allowed: ReadonlyArray<string>): Array<Block> => [
  { kind: "title", text: "svc is running" },
  {
    kind: "fields",
    rows: [
      ["Base URL", server.baseUrl],
      ["MCP URL", server.mcpUrl],
      database === undefined ? ["Data dir", options.ephemeral ? `${server.dataDir} (removed at exit)` : server.dataDir] : ["Database", database],
      ["Organization", server.organization ? `${server.organization.slug} (${server.organization.id})` : "none"],
      ...(options.rateLimit === undefined ? [] : [["Rate limit", `${options.rateLimit} requests per minute per key (local testing)`] as const]),
      ...(allowed.length === 0 ? [] : [["Allowed origins", allowed.join(", ")] as const])
    ]
  },
  ...(server.bootstrapKey === null
    ? []
    : [
        {
          kind: "secret",
          label: `Bootstrap key of '${server.organization?.slug ?? "default"}' (every scope)`,
          value: server.bootstrapKey,
          note: "Shown once, on this first start: it will not be shown again. Store it now."
        } as const
      ]),
  ...(lostKey === null ? [] : [{ kind: "note", tone: "warning", text: lostKey } as const]),
  ...(server.demo === null
    ? []
    : [
        ...(server.demo.created ? [] : [{ kind: "note", text: "The demo was seeded on an earlier start; it is there, not seeded again." } as const]),
        {
          kind: "fields",
          rows: [
            ["Demo Knowledgebase", server.demo.knowledgebaseId],
            ["Demo Agent", server.demo.agentId],
            ["Demo Flow", server.demo.flowId],
            ["Demo App", server.demo.appId]
          ]
        } as const
      ]),
  {
    kind: "note",
    text: options.quiet === true ? "Press Ctrl+C to stop." : "Logs go to stderr, one line per request (--quiet for none). Press Ctrl+C to stop."
  }
]

/** Why the server did not start, in one line: a taken port says which and what to do. */
const startFailure = (error: unknown, options: ServeOptions): CliError => {
  const address = `${options.host ?? "127.0.0.1"}:${options.port ?? 8787}`
  switch (errnoCode(error)) {
    case "EADDRINUSE":
      return failure(`cannot start the server: ${address} is already in use; pass --port (0 picks a free port).`, "address_in_use")
    case "EADDRNOTAVAIL":
      return failure(`cannot start the server: ${address} is not an address of this machine; pass --host.`, "address_not_available")
    case "EACCES":
      return failure(`cannot start the server: no permission to listen on ${address}; pass --port above 1023.`, "address_not_permitted")
    default:
      return failure(`cannot start the server: ${describe(error)}`)
  }
}

/**
 * The first stop request (SIGINT or SIGTERM), listened for from before the server starts: a request
 * during the start stops the server once it is up and has printed what it prints.
 */
const stopRequested = (io: CliIo) => {
  let release = (): void => undefined
  const stopped = new Promise<void>((resolve) => {
    release = io.onStop(resolve)
  })
  return { stopped, release: () => release() }
}

/** A warning when a default model is named but no endpoint is configured: runs then use `builtin`. */
const unreachableModelNotice = (io: CliIo, options: ServeOptions): string | null => {
  const named = options.model?.trim() || io.env.SVC_MODEL?.trim()
  if (!named || named === "builtin" || io.env.SVC_MODEL_BASE_URL?.trim()) return null
  return `svc: the default model '${named}' needs SVC_MODEL_BASE_URL (an OpenAI-compatible endpoint); until it is set, runs use the offline builtin model.`
}

/** A warning when an embedding model is named but no endpoint is configured: search then stays lexical. */
const unreachableEmbeddingNotice = (io: CliIo, options: ServeOptions): string | null => {
  const named = options.embeddingModel?.trim() || io.env.SVC_EMBEDDING_MODEL?.trim()
  if (!named || io.env.SVC_EMBEDDING_BASE_URL?.trim() || io.env.SVC_MODEL_BASE_URL?.trim()) return null
  return `svc: the embedding model '${named}' needs SVC_EMBEDDING_BASE_URL (or SVC_MODEL_BASE_URL), an OpenAI-compatible endpoint; until one is set, search stays lexical.`
}

/**
 * With `--ephemeral`, a temporary data directory removed when the command ends (also when a second
 * Ctrl+C quits at once); `--data-dir` and `--database` do not go with it.
 */
const ephemeralDirectory = (options: ServeOptions): string | undefined => {
  if (!options.ephemeral) return undefined
  if (options.dataDir !== undefined || options.database !== undefined) {
    throw usage("--ephemeral keeps its data in a temporary directory of its own: leave out --data-dir and --database.")
  }
  const dir = mkdtempSync(join(tmpdir(), "svc-ephemeral-"))
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const serve = async (io: CliIo, options: ServeOptions) => {
  const allowedOrigins = await allowedOriginsOf(io, options)
  const otelEndpoint = otelEndpointOf(io, options)
  const ephemeral = ephemeralDirectory(options)
  const stop = stopRequested(io)
  const dataDir = ephemeral ?? resolveDataDir(io, options.dataDir)
  try {
    const database = ephemeral === undefined ? resolveDatabase(io, options.database) : undefined
    const [{ startServer }, { isDataDirectory }, { ensureDirectory }, { maskedDatabaseUrl }] = await Promise.all([
      import("../../server/server.js"),
      import("../../server/platform/sql/database-file.js"),
      import("../../server/platform/sql/database.js"),
      import("../../server/platform/sql/dialect.js")
    ])
    let server: RunningServer
    try {
      // On PostgreSQL whether the database is new is known only once open: no pending record.
      recordPending(dataDir, database === undefined && !isDataDirectory(dataDir), ensureDirectory)
      server = await startServer({
        dataDir,
        database,
        host: options.host,
        port: options.port,
        allowPrivateUrls: options.allowPrivateUrls,
        webhookRetryDelays: options.webhookRetryDelays,
        demo: options.demo,
        requestsPerMinute: options.rateLimit,
        defaultModel: options.model,
        embeddingModel: options.embeddingModel,
        allowedOrigins,
        otelEndpoint,
        requestLog: options.quiet
          ? undefined
          : { format: options.json ? "json" : "text", write: (line) => io.stderr.write(`${line}\n`) }
      })
    } catch (error) {
      throw startFailure(error, options)
    }
    const lostKey =
      server.bootstrapKey === null && server.organization !== null && isPending(dataDir)
        ? lostKeyNotice(server.organization.slug, dataDir)
        : null
    writeServerRecord(dataDir, server)
    const modelNotice = unreachableModelNotice(io, options)
    if (modelNotice !== null) progress(io, modelNotice)
    const embeddingNotice = unreachableEmbeddingNotice(io, options)
    if (embeddingNotice !== null) progress(io, embeddingNotice)
    await output(io, options, server, { json: readyJson, human: (s) => banner(s, lostKey, options, database === undefined ? undefined : maskedDatabaseUrl(database), allowedOrigins) })
    if (options.json && lostKey !== null) progress(io, lostKey)
    if (server.bootstrapKey !== null || lostKey !== null) recordShown(dataDir)
    await stop.stopped
    if (!options.json) progress(io, "svc: stopping (press Ctrl+C again to quit at once)")
    await server.close().catch((error: unknown) => {
      throw failure(describe(error))
    })
  } finally {
    stop.release()
    removeServerRecord(dataDir)
    if (ephemeral !== undefined) rmSync(ephemeral, { recursive: true, force: true })
  }
}

/** Registers `svc serve`. */
export const serveCommand = (program: Command, io: CliIo): void => {
  withDataDir(
    program
      .command("serve")
      .description("run the API server (first start creates organization 'default' and prints its key once)")
      .option("--host <host>", "address to listen on (default: 127.0.0.1)")
      .option("--port <port>", "port to listen on, 0 for any free port (default: 8787)", parsePort)
      .option("--allow-private-urls", "let url sources and MCP clients' metadata documents reach loopback and private addresses, and webhooks private networks (they reach loopback without it)")
      .option("--demo", "seed demo content into organization 'default' (once per data directory; later starts say it is there)")
      .option("--ephemeral", "keep the data in a temporary directory removed at exit (for CI); not with --data-dir or --database")
      .option("--model <name>", "the default model of Agents, Flow steps and Apps that name none (default: $SVC_MODEL, else builtin)")
      .option("--embedding-model <name>", "the embedding model that makes search hybrid (default: $SVC_EMBEDDING_MODEL, else none: lexical search)")
      .option(
        "--allowed-origins <origins>",
        "browser origins allowed on /mcp, OAuth and the Portals beside loopback ones and the server's own, comma-separated, e.g. https://app.example (default: $SVC_ALLOWED_ORIGINS, else none)"
      )
      .option("--otel-endpoint <url>", "export each execution's trace to this OpenTelemetry collector over OTLP/HTTP, e.g. http://127.0.0.1:4318 (default: $SVC_OTEL_ENDPOINT, else none)")
      .option("--rate-limit <n>", "requests per minute per key, a local-testing knob (default: 120, the spec's figure)", parsePositive)
      .option("--quiet", "log no line per request (with --json, request lines are JSON Lines on stderr)")
      .option("--webhook-retry-delays <s1,s2,s3>", "seconds before webhook attempts 2, 3 and 4 (default: 10,60,300)", parseRetryDelays)
  ).action((options: ServeOptions) => serve(io, options))
}
