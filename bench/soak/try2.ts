import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startSoakServer } from "./server.js"
import { reportCrash, runCrash } from "./crash.js"
const dataDir = mkdtempSync(join(tmpdir(), "soak-"))
console.log(dataDir)
const backend = { dataDir, database: undefined, logFile: join(dataDir, "log") }
const server = await startSoakServer(backend)
console.log(reportCrash(await runCrash(backend, server, { kills: Number(process.argv[2] ?? 3), writers: 8, upMs: 1500 }), false))
