/**
 * Crash part: `writers` concurrent writers of every kind (bench/soak/crash-writers.ts) while the
 * server process is killed with SIGKILL `kills` times and restarted on the same data and port; with
 * several instances behind the balancer (`--instances`), the instances are killed in turn, each
 * restarted while the others serve. Afterwards every acknowledged write must be there whole (read
 * back through the API) and nothing half-written may exist: no orphan rows, credits balanced with
 * what executions were charged, no run left running (on SQLite checked in the data file once the
 * server has stopped, with its integrity checks; on PostgreSQL in the database while the instances
 * still run, since the survivors take over a killed instance's runs once its lease has run out).
 */
import { join } from "node:path"
import { checkAcknowledged, type Lost, postgresHalfWritten, settleSources, sqliteHalfWritten } from "./crash-checks.js"
import { Ledger } from "./crash-ledger.js"
import { type CrashTargets, runWriter } from "./crash-writers.js"
import { SoakClient } from "./http.js"
import type { SoakDeployment } from "./instances.js"
import { killHard, startSoakServer } from "./server.js"

/** Settings of one crash run. */
export interface CrashOptions {
  readonly kills: number
  readonly writers: number
  /** Milliseconds of writing between two kills (each gap drawn between half and all of it). */
  readonly upMs: number
}

/** What the crash part measured. */
export interface CrashResult {
  readonly kills: number
  readonly instances: number
  readonly acknowledged: number
  readonly byKind: Readonly<Record<string, number>>
  readonly unknown: number
  readonly lost: ReadonlyArray<Lost>
  readonly halfWritten: ReadonlyArray<string>
  readonly sources: Readonly<Record<string, number>>
  readonly serverErrors: ReadonlyArray<string>
  readonly refused: ReadonlyArray<string>
  readonly restartMs: { readonly mean: number; readonly max: number }
}

const startingCredits = 1_000_000_000

/** How long the PostgreSQL checks wait for the survivors to take over a killed instance's runs (lease 6 s, heartbeat 2 s). */
const runsSettleMs = 30_000

/** Runs the crash part on a fresh `deployment`, whose instances this part kills (the caller stops them). */
export const runCrash = async (deployment: SoakDeployment, options: CrashOptions): Promise<CrashResult> => {
  const front = deployment.front()
  const orgs = front.ready.organizations
  if (!orgs) throw new Error("crash needs a fresh server")
  const { instances } = deployment
  const client = new SoakClient(front.ready.origin, options.writers + 2)
  try {
    const key = orgs.a.orgKey
    const kb = (await client.must(key, "POST", "/knowledgebases", { name: "Crash" })).knowledgebase.id
    const agent = (await client.must(key, "POST", "/agents", { name: "Crash helper", knowledgebaseIds: [kb] })).agent.id
    await client.must(key, "POST", `/agents/${agent}/publish`, undefined)
    const group = (await client.must(key, "POST", "/user-groups", { name: "Crash group" })).group.id
    const targets: CrashTargets = { key, knowledgebase: kb, agent, tierPlan: orgs.a.tierPlanId, group }

    const ledger = new Ledger()
    let stopped = false
    const writers = Array.from({ length: options.writers }, (_, n) => runWriter(n, client, targets, ledger, () => stopped))
    const restarts: Array<number> = []
    for (let kill = 0; kill < options.kills; kill++) {
      await new Promise((resolve) => setTimeout(resolve, options.upMs * (0.5 + Math.random() / 2)))
      const victim = kill % instances.length
      await killHard(instances[victim]!)
      const started = performance.now()
      const { backend, port } = deployment.placeOf(victim)
      instances[victim] = await startSoakServer(backend, { port })
      restarts.push(performance.now() - started)
    }
    await new Promise((resolve) => setTimeout(resolve, options.upMs / 2))
    stopped = true
    await Promise.all(writers)

    const lost = await checkAcknowledged(client, key, ledger)
    const sources = await settleSources(client, key, ledger, 60_000)
    const { backend } = deployment.placeOf(0)
    let halfWritten: Array<string>
    if (backend.database) halfWritten = await postgresHalfWritten(backend.database, orgs.a.id, startingCredits, runsSettleMs)
    else {
      await instances[0]!.stop()
      halfWritten = sqliteHalfWritten(join(backend.dataDir, "svc.sqlite"), orgs.a.id, startingCredits)
    }
    return {
      kills: options.kills,
      instances: instances.length,
      acknowledged: ledger.acknowledged.length,
      byKind: ledger.counts(),
      unknown: ledger.unknown,
      lost,
      halfWritten,
      sources,
      serverErrors: ledger.serverErrors,
      refused: ledger.refused,
      restartMs: {
        mean: Math.round(restarts.reduce((a, b) => a + b, 0) / Math.max(1, restarts.length)),
        max: Math.round(Math.max(0, ...restarts))
      }
    }
  } finally {
    await client.close()
  }
}

/** Prints the figures of a crash run; answers whether it passed. */
export const reportCrash = (result: CrashResult): boolean => {
  console.log(
    `crash: ${result.kills} SIGKILLs` +
      (result.instances > 1 ? ` of ${result.instances} instances in turn behind the balancer` : "") +
      `, restart ${result.restartMs.mean} ms mean (max ${result.restartMs.max})`
  )
  console.log(`crash: acknowledged ${result.acknowledged} ${JSON.stringify(result.byKind)}; unanswered (fate unknown) ${result.unknown}`)
  console.log(`crash: lost ${result.lost.length}, half-written ${result.halfWritten.length} (orphan rows, credits unbalanced, runs left running)`)
  console.log(`crash: acknowledged sources afterwards ${JSON.stringify(result.sources)}`)
  for (const lost of result.lost.slice(0, 20)) console.log(`  LOST ${lost.write}: ${lost.why}`)
  for (const problem of result.halfWritten) console.log(`  HALF-WRITTEN ${problem}`)
  for (const error of result.serverErrors.slice(0, 10)) console.log(`  5xx ${error}`)
  for (const refusal of result.refused.slice(0, 10)) console.log(`  REFUSED ${refusal}`)
  return (
    result.lost.length === 0 &&
    result.halfWritten.length === 0 &&
    result.serverErrors.length === 0 &&
    result.refused.length === 0 &&
    !result.sources.processing &&
    result.kills > 0
  )
}
