/**
 * `npm run bench:provisioning`: end-user provisioning measured from a second process.
 *
 * - `POST /end-users` with 2 plans and 2 groups, a new email each time, from 20 keys in parallel
 *   (one stream per key): accounts per second, p50/p99 latency, error count;
 * - `GET /end-users` paging (limit 200) through 100,000 accounts: time to page through, p99 per page.
 *
 *   node dist/bench/provisioning.js [--duration 10] [--accounts 100000] [--keep-data] [--json] [--profile DIR]
 *
 * `--profile DIR` writes the server's V8 CPU profile there (summarize it with profile-summary.js).
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Agent, request } from "undici"
import { type Child, cleanupOnExit, planCpus, procCpuMs, spawnChild } from "./children.js"
import type { ProvisioningReady } from "./protocol.js"
import { fmt, table } from "./report.js"

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    accounts: { type: "string", default: "100000" },
    "keep-data": { type: "boolean", default: false },
    json: { type: "boolean", default: false },
    profile: { type: "string" }
  }
})

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0

/** Latency summary of sorted milliseconds. */
const latency = (ms: Array<number>) => {
  ms.sort((a, b) => a - b)
  return { p50: percentile(ms, 50), p90: percentile(ms, 90), p99: percentile(ms, 99), max: ms[ms.length - 1] ?? 0 }
}

/** Provisions new accounts from every key at once for `seconds`; each key is one stream of requests. */
const provisionLoad = async (ready: ProvisioningReady, seconds: number, label: string) => {
  // One keep-alive connection per stream, one request at a time on it (undici's `pipelining: 0` would close it after each).
  const dispatcher = new Agent({ connections: ready.keys.length + 5, pipelining: 1 })
  const times: Array<number> = []
  const statuses: Record<string, number> = {}
  let errors = 0
  const cpuBefore = procCpuMs(ready.pid)
  const started = performance.now()
  const until = started + seconds * 1_000
  await Promise.all(
    ready.keys.map(async (key, stream) => {
      for (let n = 0; performance.now() < until; n++) {
        const body = JSON.stringify({
          email: `${label}-${stream}-${n}@example.com`,
          fullName: `Bench ${stream} ${n}`,
          tierPlanIds: ready.tierPlanIds,
          groupIds: ready.groupIds
        })
        const sent = performance.now()
        try {
          const response = await request(`${ready.baseUrl}/end-users`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body,
            dispatcher
          })
          await response.body.dump()
          statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1
          times.push(performance.now() - sent)
        } catch {
          errors++
        }
      }
    })
  )
  const elapsed = (performance.now() - started) / 1_000
  const cpuAfter = procCpuMs(ready.pid)
  await dispatcher.close()
  const created = statuses["201"] ?? 0
  return {
    streams: ready.keys.length,
    seconds: Number(elapsed.toFixed(2)),
    requests: times.length,
    accountsPerSecond: Number((created / elapsed).toFixed(0)),
    latencyMs: latency(times),
    statuses,
    errorResponses: times.length - created,
    connectionErrors: errors,
    serverCpuUsPerAccount: cpuBefore === null || cpuAfter === null || created === 0 ? null : Number((((cpuAfter - cpuBefore) * 1_000) / created).toFixed(0))
  }
}

/** Pages through every account of the paging organization, one page at a time. */
const pageThrough = async (ready: ProvisioningReady) => {
  const times: Array<number> = []
  let cursor: string | null = null
  let seen = 0
  const started = performance.now()
  do {
    const url: string = `${ready.baseUrl}/end-users?limit=200${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
    const sent = performance.now()
    const response = await request(url, { headers: { authorization: `Bearer ${ready.pagingKey}` } })
    if (response.statusCode !== 200) throw new Error(`GET /end-users answered ${response.statusCode}: ${await response.body.text()}`)
    const page = (await response.body.json()) as { endUsers: Array<unknown>; nextCursor: string | null }
    times.push(performance.now() - sent)
    seen += page.endUsers.length
    cursor = page.nextCursor
  } while (cursor !== null)
  return { accounts: seen, pages: times.length, seconds: Number(((performance.now() - started) / 1_000).toFixed(2)), perPageMs: latency(times) }
}

const main = async () => {
  const plan = await planCpus()
  console.error(plan.describe("bench:provisioning", { server: "svc", runner: "load generator" }))
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-provisioning-"))
  const children: Array<Child<ProvisioningReady>> = []
  const cleanup = cleanupOnExit(children, () => dataDir, flags["keep-data"], "the provisioning benchmark")
  try {
    console.error(`seeding ${flags.accounts} accounts ...`)
    const svc = await spawnChild<ProvisioningReady>({
      name: "svc",
      script: join(dirname(fileURLToPath(import.meta.url)), "provisioning-launcher.js"),
      args: ["--data-dir", dataDir, "--accounts", flags.accounts],
      cpu: plan.serverCpu,
      nodeFlags: flags.profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", flags.profile],
      logFile: join(dataDir, "svc.stderr.log")
    })
    children.push(svc)
    console.error("warming up ...")
    await provisionLoad(svc.ready, 2, "warmup")
    console.error(`provisioning for ${flags.duration} s ...`)
    const provisioning = await provisionLoad(svc.ready, Number(flags.duration), "run")
    console.error("paging ...")
    const paging = await pageThrough(svc.ready)
    if (flags.json) {
      console.log(JSON.stringify({ machine: plan.json("svc", "runner"), provisioning, paging }, null, 2))
      return
    }
    console.log(plan.describe("bench:provisioning", { server: "svc", runner: "load generator" }))
    console.log()
    console.log(
      table(
        ["POST /end-users (2 plans, 2 groups)", "streams", "accounts", "accounts/s", "p50 ms", "p99 ms", "max ms", "errors", "server CPU µs/account"],
        [
          [
            "new accounts, 20 keys in parallel",
            String(provisioning.streams),
            String(provisioning.statuses["201"] ?? 0),
            String(provisioning.accountsPerSecond),
            fmt(provisioning.latencyMs.p50, 2),
            fmt(provisioning.latencyMs.p99, 2),
            fmt(provisioning.latencyMs.max, 1),
            String(provisioning.errorResponses + provisioning.connectionErrors),
            fmt(provisioning.serverCpuUsPerAccount, 0)
          ]
        ]
      )
    )
    console.log()
    console.log(
      table(
        ["GET /end-users?limit=200", "accounts", "pages", "total s", "p50 ms/page", "p99 ms/page", "max ms/page"],
        [
          [
            "page through every account",
            String(paging.accounts),
            String(paging.pages),
            fmt(paging.seconds, 2),
            fmt(paging.perPageMs.p50, 2),
            fmt(paging.perPageMs.p99, 2),
            fmt(paging.perPageMs.max, 2)
          ]
        ]
      )
    )
  } finally {
    await cleanup()
  }
}

await main()
