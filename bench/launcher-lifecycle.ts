/**
 * What benchmark launchers (the svc child process) share: starting svc with the demo and a fake
 * model, and ending: close the server cleanly on SIGTERM, SIGINT or when its stdin (the
 * benchmark's pipe) closes, forcing an exit after 5 s.
 */
import { startServer } from "../server/server.js"

/**
 * svc on a fresh data directory for the benchmarks of runs: the demo seeded, every model call sent
 * to `modelUrl` (a fake OpenAI-compatible model), the rate limit out of the way; on the PostgreSQL
 * database `database` when given.
 */
export const startDemoWithModel = async (dataDir: string, modelUrl: string, database?: string) => {
  const server = await startServer({
    dataDir,
    database,
    host: "127.0.0.1",
    port: 0,
    requestsPerMinute: 1_000_000_000,
    demo: true,
    model: { baseUrl: modelUrl, apiKey: undefined }
  })
  if (!server.bootstrapKey || !server.demo || !server.organization) throw new Error(`${dataDir} is not a fresh data directory`)
  return { ...server, bootstrapKey: server.bootstrapKey, demo: server.demo, organization: server.organization }
}

/** Stops `server` (and the process) on the first of those signals; stdin is left flowing. */
export const stopOnSignals = (server: { readonly close: () => Promise<void> }): void => {
  let stopping = false
  const stop = () => {
    if (stopping) return
    stopping = true
    setTimeout(() => process.exit(1), 5_000).unref()
    server.close().then(
      () => process.exit(0),
      () => process.exit(1)
    )
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
  process.stdin.on("end", stop)
  process.stdin.on("error", stop)
  process.stdin.resume()
}
