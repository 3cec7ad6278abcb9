/** `svc serve`: runs the API and MCP server on a data directory until SIGINT or SIGTERM. */
import type { Command } from "commander"
import type { RunningServer } from "../../server/server.js"
import { describe, failure } from "../errors.js"
import { type DataDirOptions, parsePort, parseRetryDelays, resolveDataDir, withDataDir } from "../options.js"
import { output, progress } from "../output.js"
import type { Block } from "../ui/blocks.js"

interface ServeOptions extends DataDirOptions {
  readonly host?: string
  readonly port?: number
  readonly allowPrivateUrls?: boolean
  readonly demo?: boolean
  readonly webhookRetryDelays?: [number, number, number]
}

/** The ready line of `svc serve --json`. */
export const readyJson = (server: RunningServer) => ({
  baseUrl: server.baseUrl,
  mcpUrl: server.mcpUrl,
  dataDir: server.dataDir,
  organization: server.organization && { id: server.organization.id, slug: server.organization.slug },
  bootstrapKey: server.bootstrapKey
})

const banner = (server: RunningServer): Array<Block> => [
  { kind: "title", text: "svc is running" },
  {
    kind: "fields",
    rows: [
      ["Base URL", server.baseUrl],
      ["MCP URL", server.mcpUrl],
      ["Data dir", server.dataDir],
      ["Organization", server.organization ? `${server.organization.slug} (${server.organization.id})` : "none"]
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
  { kind: "note", text: "Logs go to stderr. Press Ctrl+C to stop." }
]

/**
 * Stops the server on SIGINT or SIGTERM: lets in-flight requests finish, closes the database and
 * exits 0. A second signal exits at once with 130.
 */
const stopOnSignals = (announce: boolean) => {
  let server: RunningServer | null = null
  let stopping = false
  const shutdown = (running: RunningServer) =>
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        progress(`svc: ${describe(error)}`)
        process.exit(1)
      }
    )
  const onSignal = () => {
    if (stopping) process.exit(130)
    stopping = true
    if (announce) progress("svc: stopping (press Ctrl+C again to quit at once)")
    if (server) void shutdown(server)
  }
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)
  return (running: RunningServer) => {
    server = running
    if (stopping) void shutdown(running)
  }
}

const serve = async (options: ServeOptions) => {
  const attach = stopOnSignals(!options.json)
  const { startServer } = await import("../../server/server.js")
  let server: RunningServer
  try {
    server = await startServer({
      dataDir: resolveDataDir(options.dataDir),
      host: options.host,
      port: options.port,
      allowPrivateUrls: options.allowPrivateUrls,
      webhookRetryDelays: options.webhookRetryDelays,
      demo: options.demo
    })
  } catch (error) {
    throw failure(`cannot start the server: ${describe(error)}`)
  }
  attach(server)
  await output(options, server, { json: readyJson, human: banner })
}

/** Registers `svc serve`. */
export const serveCommand = (program: Command): void => {
  withDataDir(
    program
      .command("serve")
      .description("run the API and MCP server (first start creates organization 'default' and prints its key once)")
      .option("--host <host>", "address to listen on (default: 127.0.0.1)")
      .option("--port <port>", "port to listen on, 0 for any free port (default: 8787)", parsePort)
      .option("--allow-private-urls", "let url sources and webhooks reach loopback and private addresses")
      .option("--demo", "seed demo content")
      .option("--webhook-retry-delays <s1,s2,s3>", "seconds before webhook attempts 2, 3 and 4 (default: 10,60,300)", parseRetryDelays)
  ).action(serve)
}
