import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startSoakServer } from "./server.js"
import { reportFuzz, runFuzz } from "./fuzz.js"
const dataDir = mkdtempSync(join(tmpdir(), "soak-"))
console.log(dataDir)
const server = await startSoakServer({ dataDir, database: undefined, logFile: join(dataDir, "log") })
try {
  console.log(reportFuzz(await runFuzz(server, { count: Number(process.argv[2] ?? 3000), concurrency: 16, seed: Number(process.argv[3] ?? 1) }), 0))
} finally {
  await server.stop()
}
