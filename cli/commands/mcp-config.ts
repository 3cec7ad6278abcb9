/**
 * `svc mcp config --client claude-desktop|claude-code|cursor|vscode [--data-dir D | --url MCP_URL]`:
 * prints a ready-to-paste MCP client configuration that starts this very installation (absolute paths
 * to the Node binary and to `bin/svc.js`, never a bare `npx svc`), so a desktop client that launches
 * it from its own folder runs svc and nothing else. With `--url`, clients that speak Streamable HTTP
 * get the address (and the key as a header when one is given; without one they sign in with OAuth);
 * Claude Desktop, which launches only commands, gets `svc mcp --url` as a stdio bridge.
 */
import { type Command, Option } from "commander"
import { existsSync, realpathSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { failure, usage } from "../errors.js"
import type { CliIo } from "../io.js"
import { parseMcpUrl } from "../mcp-url.js"
import { resolveDataDir } from "../options.js"

/** The clients a configuration is printed for. */
export const mcpClients = ["claude-desktop", "claude-code", "cursor", "vscode"] as const
type McpClient = (typeof mcpClients)[number]

interface ConfigOptions {
  readonly client: McpClient
  readonly dataDir?: string | undefined
  readonly database?: string | undefined
  readonly url?: string | undefined
  readonly apiKey?: string | undefined
  readonly name: string
  readonly json?: boolean | undefined
}

/** A launch: the command and arguments a client starts, and its environment. */
interface Launch {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string>
}

/** What is printed: a JSON document to paste into a file, or a command to run. */
type ClientConfig =
  | { readonly kind: "file"; readonly where: string; readonly document: unknown }
  | { readonly kind: "command"; readonly where: string; readonly command: string }

const keyPlaceholder = "svcp_… (a personal key: svc keys create --personal)"

/** `bin/svc.js` of this installation, found from this module's own place (tsc output or bundle alike). */
const svcScript = (): string => {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = join(dir, "bin", "svc.js")
    if (existsSync(candidate) && existsSync(join(dir, "package.json"))) return realpathSync(candidate)
    const parent = dirname(dir)
    if (parent === dir) throw failure("cannot find this installation's bin/svc.js.")
    dir = parent
  }
}

/** `word` as one POSIX shell word. */
const shellWord = (word: string): string => (/^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.split("'").join("'\\''")}'`)

const mcpAddress = (url: string): string => parseMcpUrl(url).href

/** The stdio launch of `svc mcp` on the data directory (or bridged to `url`). */
const stdioLaunch = (io: CliIo, options: ConfigOptions, apiKey: string | undefined): Launch => {
  const target =
    options.url !== undefined
      ? ["--url", mcpAddress(options.url)]
      : ["--data-dir", resolveDataDir(io, options.dataDir), ...(options.database === undefined ? [] : ["--database", options.database])]
  return { command: process.execPath, args: [svcScript(), "mcp", ...target], env: { SVC_API_KEY: apiKey ?? keyPlaceholder } }
}

const headersOf = (apiKey: string | undefined): Record<string, string> | undefined =>
  apiKey === undefined ? undefined : { Authorization: `Bearer ${apiKey}` }

/** The configuration of `client`: over HTTP where the client speaks it and `--url` is given, else a stdio launch. */
const configFor = (io: CliIo, options: ConfigOptions, apiKey: string | undefined): ClientConfig => {
  const name = options.name
  const http = options.url !== undefined && options.client !== "claude-desktop" ? mcpAddress(options.url) : undefined
  const launch = stdioLaunch(io, options, apiKey)
  const headers = headersOf(apiKey)
  switch (options.client) {
    case "claude-desktop":
      return {
        kind: "file",
        where: "Claude Desktop's claude_desktop_config.json (Settings → Developer → Edit Config), under mcpServers",
        document: { mcpServers: { [name]: launch } }
      }
    case "cursor":
      return {
        kind: "file",
        where: "~/.cursor/mcp.json (every project) or .cursor/mcp.json (this project), under mcpServers",
        document: { mcpServers: { [name]: http === undefined ? launch : { url: http, ...(headers ? { headers } : {}) } } }
      }
    case "vscode":
      return {
        kind: "file",
        where: ".vscode/mcp.json in the workspace (or the MCP: Open User Configuration command), under servers",
        document: {
          servers: {
            [name]: http === undefined ? { type: "stdio", ...launch } : { type: "http", url: http, ...(headers ? { headers } : {}) }
          }
        }
      }
    case "claude-code": {
      const command =
        http === undefined
          ? [
              "claude mcp add",
              ...Object.entries(launch.env).map(([key, value]) => `--env ${shellWord(`${key}=${value}`)}`),
              shellWord(name),
              "--",
              ...[launch.command, ...launch.args].map(shellWord)
            ]
          : ["claude mcp add --transport http", shellWord(name), shellWord(http), ...(headers ? [`--header ${shellWord(`Authorization: ${headers.Authorization}`)}`] : [])]
      return { kind: "command", where: "a shell (add --scope user to have it in every project)", command: command.join(" ") }
    }
  }
}

const printConfig = async (io: CliIo, options: ConfigOptions) => {
  if (options.url !== undefined && (options.dataDir !== undefined || options.database !== undefined)) {
    throw usage("give --url or --data-dir (and --database), not both.")
  }
  if (options.url === undefined && options.database === undefined) {
    const dataDir = resolveDataDir(io, options.dataDir)
    const { isDataDirectory } = await import("../../server/platform/sql/database-file.js")
    if (!isDataDirectory(dataDir)) {
      throw failure(`no data directory at ${dataDir}; start 'svc serve' there once, or pass --data-dir or --url.`, "no_data_directory")
    }
  }
  const apiKey = (options.apiKey ?? io.env.SVC_API_KEY)?.trim() || undefined
  const config = configFor(io, options, apiKey)
  const text = config.kind === "file" ? JSON.stringify(config.document, null, 2) : config.command
  if (options.json) {
    io.stdout.write(`${JSON.stringify({ client: options.client, ...(config.kind === "file" ? { config: config.document } : { command: config.command }), where: config.where })}\n`)
    return
  }
  io.stdout.write(`${text}\n`)
  io.stderr.write(`svc: ${config.kind === "file" ? "paste it into" : "run it in"} ${config.where}.\n`)
  if (apiKey === undefined && (config.kind === "file" ? text : config.command).includes(keyPlaceholder)) {
    io.stderr.write("svc: no key given (--api-key or $SVC_API_KEY): put a personal key where it says svcp_….\n")
  }
}

/** Registers `svc mcp config` under `svc mcp`. */
export const mcpConfigCommand = (mcp: Command, io: CliIo): void => {
  mcp
    .command("config")
    .description("print a ready-to-paste configuration that starts this svc from any folder, for an MCP client")
    .addOption(new Option("--client <client>", "the MCP client").choices(mcpClients).makeOptionMandatory())
    .option("--data-dir <dir>", "the data directory the client's svc serves (default: $SVC_DATA_DIR or ./.svc, made absolute)")
    .option("--database <url>", "with --data-dir: the postgres:// URL the data is kept in")
    .option("--url <mcp-url>", "a running server's MCP address instead (like http://127.0.0.1:8787/mcp)")
    .option("--api-key <key>", "the personal key to put in the configuration (default: $SVC_API_KEY; else a placeholder)")
    .option("--name <name>", "the server's name in the client", "svc")
    .option("--json", "print one machine-readable JSON document on stdout")
    // `svc mcp` takes --data-dir, --url and --api-key too, and commander gives them to it wherever they stand.
    .action((_options: ConfigOptions, command: Command) => printConfig(io, command.optsWithGlobals<ConfigOptions>()))
}
