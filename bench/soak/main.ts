/**
 * `npm run soak`: the reliability suite (issue 13). Four parts, each on a fresh server process of
 * its own (a temp data directory, or `--database URL` where `{part}` names the part's database):
 * crash, tenancy, fuzz and load. Each prints its figures; the exit code is 1 when any part failed.
 *
 * `--instances N` (issue 24): each part on N instances of one PostgreSQL database behind the
 * round-robin balancer of bench/balancer.ts (bench/soak/instances.ts); the crash part kills them in
 * turn. Without `--database`, a throwaway PostgreSQL cluster with durable defaults
 * (bench/instances-postgres.ts) holds one database per part.
 *
 *   npm run soak -- [--part crash|tenancy|fuzz|load] [--database URL] [--instances 1]
 *     [--kills 20] [--writers 8] [--up-ms 1500]           crash
 *     [--fuzz-requests 100000] [--fuzz-concurrency 16] [--seed N] [--fuzz-only 'POST /knowledgebases/{id}/sources']   fuzz
 *     [--load-seconds 30] [--connections 100]              load
 *     [--keep-data]
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { type BenchCluster, createDatabase, startBenchCluster } from "../instances-postgres.js"
import { reportCrash, runCrash } from "./crash.js"
import { reportFuzz, runFuzz } from "./fuzz.js"
import { reportLoad, runLoad } from "./load.js"
import { type SoakDeployment, startSoakDeployment } from "./instances.js"
import type { Backend } from "./server.js"
import { reportTenancy, runTenancy } from "./tenancy.js"

const parts = ["crash", "tenancy", "fuzz", "load"] as const
type Part = (typeof parts)[number]

const { values } = parseArgs({
  options: {
    part: { type: "string", multiple: true },
    database: { type: "string" },
    instances: { type: "string", default: "1" },
    kills: { type: "string", default: "20" },
    writers: { type: "string", default: "8" },
    "up-ms": { type: "string", default: "1500" },
    "fuzz-requests": { type: "string", default: "100000" },
    "fuzz-concurrency": { type: "string", default: "16" },
    seed: { type: "string" },
    "fuzz-only": { type: "string" },
    "load-seconds": { type: "string", default: "30" },
    connections: { type: "string", default: "100" },
    "keep-data": { type: "boolean", default: false }
  }
})

const chosen = (values.part ?? [...parts]) as Array<Part>
for (const part of chosen) if (!parts.includes(part)) throw new Error(`--part: one of ${parts.join(", ")}, not '${part}'`)
const minimumFuzz = 100_000
const fuzzRequests = Number(values["fuzz-requests"])
const seed = values.seed === undefined ? Date.now() % 1_000_000 : Number(values.seed)
const instances = Number(values.instances)
if (!Number.isInteger(instances) || instances < 1) throw new Error("--instances: a whole number, 1 or more")
/** Several instances without --database: a throwaway cluster, one database per part. */
const cluster: BenchCluster | null = instances > 1 && values.database === undefined ? await startBenchCluster() : null

/** The part's PostgreSQL database URL, or undefined for SQLite. */
const databaseOf = async (part: Part): Promise<string | undefined> =>
  cluster !== null ? createDatabase(cluster.adminUrl, `svc_soak_${part}_${Date.now().toString(36)}`) : values.database?.replaceAll("{part}", part)

/** Runs one part on a fresh server; answers whether it passed. */
const runPart = async (part: Part): Promise<boolean> => {
  const dataDir = mkdtempSync(join(tmpdir(), `svc-soak-${part}-`))
  const started = performance.now()
  let deployment: SoakDeployment | null = null
  try {
    const backend: Backend = { dataDir, database: await databaseOf(part), logFile: join(dataDir, "server.log") }
    console.log(`\n== ${part} (${backend.database ? "PostgreSQL" : "SQLite"}${instances > 1 ? `, ${instances} instances behind the balancer` : ""}; data ${dataDir})`)
    deployment = await startSoakDeployment(backend, instances)
    const server = deployment.front()
    switch (part) {
      case "crash":
        return reportCrash(await runCrash(deployment, { kills: Number(values.kills), writers: Number(values.writers), upMs: Number(values["up-ms"]) }))
      case "tenancy":
        return reportTenancy(await runTenancy(server))
      case "fuzz":
        console.log(`fuzz: seed ${seed} (--seed ${seed} repeats this run)`)
        return reportFuzz(await runFuzz(server, { count: fuzzRequests, concurrency: Number(values["fuzz-concurrency"]), seed, only: values["fuzz-only"] }), minimumFuzz)
      case "load":
        return reportLoad(await runLoad(server, { connections: Number(values.connections), seconds: Number(values["load-seconds"]) }))
    }
  } catch (error) {
    console.log(`${part}: FAILED to run: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
    for (const instance of deployment?.instances ?? []) console.log(instance.stderrTail())
    return false
  } finally {
    await deployment?.stop()
    console.log(`${part}: ${((performance.now() - started) / 1000).toFixed(0)} s`)
    if (!values["keep-data"]) rmSync(dataDir, { recursive: true, force: true })
  }
}

console.log(
  `svc reliability suite: ${chosen.join(", ")}; node ${process.version}` +
    (instances > 1 ? `; ${instances} instances on PostgreSQL behind a round-robin balancer${cluster === null ? "" : " (a throwaway cluster, durable defaults)"}` : "") +
    (fuzzRequests < minimumFuzz && chosen.includes("fuzz") ? `; fuzz shortened to ${fuzzRequests} requests (the suite's bar is ${minimumFuzz}: this run cannot pass)` : "")
)
const outcomes: Array<[Part, boolean]> = []
try {
  for (const part of chosen) outcomes.push([part, await runPart(part)])
} finally {
  cluster?.stop()
}
console.log(`\n${outcomes.map(([part, ok]) => `${part}: ${ok ? "passed" : "FAILED"}`).join(", ")}`)
process.exit(outcomes.every(([, ok]) => ok) ? 0 : 1)
