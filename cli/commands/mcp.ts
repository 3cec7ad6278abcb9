/**
 * `svc mcp [--data-dir D | --url MCP_URL] [--tools families]`: the MCP server on stdio for desktop
 * AI clients, with a personal key (`--api-key`, else `SVC_API_KEY`). By default in this process on
 * the data directory (the ingestion worker included); with `--url`, a bridge to a running server's
 * MCP address. stdout carries nothing but protocol; everything else goes to stderr.
 */
import type { Command } from "commander"
import { type Readable, Writable } from "node:stream"
import { failure, usage } from "../errors.js"
import type { CliIo } from "../io.js"
import { parseMcpUrl } from "../mcp-url.js"
import { resolveDatabase, resolveDataDir, runsWithoutSubcommand } from "../options.js"
import { mcpConfigCommand } from "./mcp-config.js"

interface McpOptions {
  readonly dataDir?: string | undefined
  readonly database?: string | undefined
  readonly url?: string | undefined
  readonly apiKey?: string | undefined
  readonly tools?: string | undefined
}

const apiKeyOf = (io: CliIo, options: McpOptions): string => {
  const key = options.apiKey ?? (io.env.SVC_API_KEY || undefined)
  if (key === undefined || key.trim() === "") throw usage("no API key: pass --api-key or set SVC_API_KEY to a personal key.")
  return key.trim()
}

/** The MCP address `--url` names, with `--tools` added to its query. */
const addressOf = (url: string, tools: string | undefined): URL => {
  const parsed = parseMcpUrl(url)
  if (tools !== undefined) parsed.searchParams.set("tools", tools)
  return parsed
}

/** The run's stdout as a stream (the real process's is one; a test's buffer is wrapped). */
const writableOf = (output: CliIo["stdout"]): Writable =>
  output instanceof Writable
    ? output
    : new Writable({
        write: (chunk: Buffer | string, _encoding, done) => {
          output.write(chunk.toString())
          done()
        }
      })

const log = (io: CliIo) => (line: string) => void io.stderr.write(`${line}\n`)

/** Serves MCP in this process on the data directory until stdin ends. */
const inProcess = async (io: CliIo, options: McpOptions, apiKey: string) => {
  const [{ isDataDirectory }, { CoreLive }, { features }, { mergeLayers }, { StderrLogger }, { parseFamilies }, { serveStdioInProcess }, { McpSignInLive }, Layer, ManagedRuntime] = await Promise.all([
    import("../../server/platform/sql/database-file.js"),
    import("../../server/core.js"),
    import("../../server/features.js"),
    import("../../server/platform/feature.js"),
    import("../../server/platform/logging.js"),
    import("../../server/mcp/families.js"),
    import("../../server/mcp/stdio.js"),
    import("../../server/mcp/sign-in/feature.js"),
    import("effect/Layer"),
    import("effect/ManagedRuntime")
  ])
  const families = parseFamilies(options.tools ?? null)
  if ("_tag" in families) throw usage(`--tools: ${families.message.replace(/^tools: /, "")}`)
  const dataDir = resolveDataDir(io, options.dataDir)
  const database = resolveDatabase(io, options.database)
  if (database === undefined && !isDataDirectory(dataDir)) throw failure(`no data directory at ${dataDir} (start 'svc serve' there once, or pass --data-dir).`)
  const logger = StderrLogger()
  const core = Layer.provideMerge(CoreLive({ dataDir, database }), logger)
  const workers = mergeLayers(features.map((feature) => feature.workers))
  const runtime = ManagedRuntime.make(Layer.provideMerge(Layer.merge(workers, McpSignInLive), core))
  try {
    await serveStdioInProcess({
      runtime: await runtime.runtime(),
      apiKey,
      families,
      input: io.stdin as Readable,
      output: writableOf(io.stdout)
    })
  } catch (error) {
    if (typeof error === "object" && error !== null && "code" in error && "message" in error) {
      throw failure(String((error as { message: string }).message), String((error as { code: string }).code))
    }
    throw error
  } finally {
    await runtime.dispose()
  }
}

const run = async (io: CliIo, options: McpOptions) => {
  if (options.url !== undefined && options.dataDir !== undefined) throw usage("give --url or --data-dir, not both.")
  const apiKey = apiKeyOf(io, options)
  if (options.url === undefined) return inProcess(io, options, apiKey)
  const { bridgeStdioToHttp } = await import("../../server/mcp/stdio.js")
  await bridgeStdioToHttp({
    url: addressOf(options.url, options.tools),
    apiKey,
    input: io.stdin as Readable,
    output: writableOf(io.stdout),
    log: log(io)
  })
}

/** Registers `svc mcp`. */
export const mcpCommand = (program: Command, io: CliIo): void => {
  const mcp = program
    .command("mcp")
    .description("the MCP server on stdio for desktop AI clients (personal key from --api-key or $SVC_API_KEY)")
    .option("--data-dir <dir>", "serve in this process on this data directory (default: $SVC_DATA_DIR or ./.svc)")
    .option("--database <url>", "with --data-dir: the postgres:// URL the data is kept in (default: $SVC_DATABASE_URL)")
    .option("--url <mcp-url>", "bridge to a running server's MCP address instead (like http://127.0.0.1:8787/mcp)")
    .option("--api-key <key>", "a personal API key (default: $SVC_API_KEY)")
    .option("--tools <families>", "tool families: run, authoring, knowledge, provisioning, agents (default: all)")
    .action((options: McpOptions) => run(io, options))
  mcpConfigCommand(mcp, io)
  runsWithoutSubcommand(mcp)
}
