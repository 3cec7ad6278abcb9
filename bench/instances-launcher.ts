/**
 * Child process of the benchmarks of several instances (issue 24): one more svc instance on a
 * PostgreSQL database that another instance already set up (its migrations run, its organizations
 * and keys made), with the benchmarks' raised per-key rate and, when given, every model call sent to
 * `--model-url` (bench/fake-model.ts). Prints one JSON ready line (`InstanceReady`); stops as the
 * other launchers do (bench/launcher-lifecycle.ts).
 *
 *   node dist/bench/instances-launcher.js --data-dir DIR --database postgres://… [--model-url URL] [--port 0]
 */
import { parseArgs } from "node:util"
import { startServer } from "../server/server.js"
import type { InstanceReady } from "./instances-protocol.js"
import { stopOnSignals } from "./launcher-lifecycle.js"

const { values } = parseArgs({
  options: {
    "data-dir": { type: "string" },
    database: { type: "string" },
    "model-url": { type: "string" },
    port: { type: "string", default: "0" },
    "requests-per-minute": { type: "string", default: "1000000000" }
  }
})
const dataDir = values["data-dir"]
const database = values.database
if (!dataDir || !database) throw new Error("--data-dir and --database are required")

const server = await startServer({
  dataDir,
  database,
  host: "127.0.0.1",
  port: Number(values.port),
  requestsPerMinute: Number(values["requests-per-minute"]),
  ...(values["model-url"] ? { model: { baseUrl: values["model-url"], apiKey: undefined } } : {})
})
stopOnSignals(server)

const ready: InstanceReady = { ready: true, pid: process.pid, origin: server.origin, baseUrl: server.baseUrl }
process.stdout.write(`${JSON.stringify(ready)}\n`)
