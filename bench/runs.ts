/**
 * `npm run bench:runs`: conversation turns of Agents, measured from a second process.
 *
 * - turns per second and CPU per turn with the `builtin` model (retrieval over the demo's
 *   Knowledgebase) and with a fake OpenAI-compatible model that answers at once (the server's own
 *   overhead per turn: execution, credit, history, messages, the model client), answered whole and
 *   streamed (a streamed turn also numbers and stores its events, issue 25);
 * - what the turns recorded to be followed: the trace stored with each execution (bytes of JSON)
 *   and the events stored per streamed run (what that costs a turn against a build from before
 *   issue 25 is measured A/B in docs/performance.md, "What following runs costs a turn");
 * - time to first byte of a streamed reply (`event: start` is sent before the model answers);
 * - the server's memory with 1,000 streams held open by a model that never finishes.
 *
 *   node dist/bench/runs.js [--duration 10] [--connections 20] [--streams 1000] [--keep-data] [--profile DIR] [--only TEXT]
 *
 * `--profile DIR` writes the server's V8 CPU profile there (summarize it with profile-summary.js);
 * `--only TEXT` runs only the scenarios whose label contains TEXT (among them two left out of the
 * default run: "builtin, no Knowledgebase", a turn without a model call, and "GET the Agent"), and
 * skips the streams.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import Database from "better-sqlite3"
import { Agent, request } from "undici"
import { type Child, cleanupOnExit, planCpus, procStatusKb, spawnChild } from "./children.js"
import { startFakeModel } from "./fake-model.js"
import { loadCells, loadColumns, type LoadResult, type LoadSpec, runLoad } from "./load.js"
import type { RunsReady } from "./protocol.js"
import { fmt, sleep, table } from "./report.js"

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "20" },
    streams: { type: "string", default: "1000" },
    "keep-data": { type: "boolean", default: false },
    profile: { type: "string" },
    only: { type: "string" }
  }
})

/**
 * What the turns recorded for following them (issue 25), read from the server's database: the
 * trace stored with each execution, and the events stored per streamed run (`run_events`).
 */
const recordedPerTurn = (dataDir: string): string => {
  const db = new Database(join(dataDir, "svc.sqlite"), { readonly: true, fileMustExist: true })
  try {
    const traces = db.prepare("SELECT count(*) AS n, avg(length(trace)) AS bytes FROM executions WHERE trace IS NOT NULL").get() as { n: number; bytes: number | null }
    const events = db
      .prepare("SELECT count(DISTINCT execution_id) AS runs, count(*) AS n, sum(length(data)) AS bytes FROM run_events")
      .get() as { runs: number; n: number; bytes: number | null }
    const perRun = (value: number) => (events.runs === 0 ? null : value / events.runs)
    return (
      `recorded to follow the runs: ${traces.n} traces, ${fmt(traces.bytes, 0)} bytes of JSON each (in the execution's row); ` +
      `${events.runs} streamed runs' events, ${fmt(perRun(events.n), 1)} events and ${fmt(perRun(events.bytes ?? 0), 0)} bytes of data each (run_events)`
    )
  } finally {
    db.close()
  }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0

const main = async () => {
  const plan = await planCpus()
  console.error(plan.describe("bench:runs", { server: "svc", runner: "load generator and fake model" }))
  const model = await startFakeModel()
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-runs-"))
  const children: Array<Child<RunsReady>> = []
  const cleanup = cleanupOnExit(children, () => dataDir, flags["keep-data"], "the runs benchmark")
  try {
    const svc = await spawnChild<RunsReady>({
      name: "svc",
      script: join(dirname(fileURLToPath(import.meta.url)), "runs-launcher.js"),
      args: ["--data-dir", dataDir, "--model-url", model.baseUrl],
      cpu: plan.serverCpu,
      nodeFlags: flags.profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", flags.profile],
      logFile: join(dataDir, "svc.stderr.log")
    })
    children.push(svc)
    const { baseUrl, bootstrapKey, demoAgentId, pid } = svc.ready
    const headers = { authorization: `Bearer ${bootstrapKey}`, "content-type": "application/json" }
    const agentOn = async (modelName: string) => {
      const created = await fetch(`${baseUrl}/agents`, { method: "POST", headers, body: JSON.stringify({ name: `Bench ${modelName}`, model: modelName }) })
      const id = ((await created.json()) as { agent: { id: string } }).agent.id
      await fetch(`${baseUrl}/agents/${id}/publish`, { method: "POST", headers })
      return id
    }
    const instantAgent = await agentOn("instant")
    const holdAgent = await agentOn("hold")
    const noModelAgent = await agentOn("builtin")
    // The demo's PDF is indexed by then in practice; give the worker a moment anyway.
    await sleep(1_000)

    const turn = (agentId: string) => ({
      url: `${baseUrl}/agents/${agentId}/conversation`,
      method: "POST" as const,
      headers,
      body: JSON.stringify({ message: "How long do I have to return a chair?" }),
      connections: Number(flags.connections),
      durationS: Number(flags.duration)
    })
    const results: Array<[string, LoadResult]> = []
    const scenarios: ReadonlyArray<readonly [string, LoadSpec]> = [
      ["builtin (retrieval)", turn(demoAgentId)],
      ["fake model, instant", turn(instantAgent)],
      // What every turn pays besides its model: a builtin Agent without Knowledgebases answers
      // "nothing matched" at once (no model call, no search).
      ["builtin, no Knowledgebase", turn(noModelAgent)],
      // For scale: the same request path reading the Agent and answering JSON.
      ["GET the Agent", { ...turn(instantAgent), method: "GET", url: `${baseUrl}/agents/${instantAgent}`, body: undefined }],
      // The same turn streamed: its events numbered and stored for GET /executions/{id}/events (issue 25).
      ["fake model, instant, streamed", { ...turn(instantAgent), body: JSON.stringify({ message: "How long do I have to return a chair?", stream: true }) }]
    ]
    for (const [label, spec] of scenarios) {
      if (flags.only !== undefined ? !label.includes(flags.only) : label === scenarios[2]![0] || label === scenarios[3]![0]) continue
      await runLoad({ ...spec, durationS: 2 }, pid)
      console.error(`turns  ${label} ...`)
      results.push([label, await runLoad(spec, pid)])
    }

    // Before the streams below add runs of their own.
    const recorded = recordedPerTurn(dataDir)
    if (flags.only !== undefined) {
      console.log(table(["scenario", "conns", "requests", ...loadColumns], results.map(([label, r]) => [label, String(r.connections), String(r.requests), ...loadCells(r)])))
      console.log(recorded)
      return
    }

    // Time to first byte of a streamed reply, one request at a time.
    const firstBytes: Array<number> = []
    for (let i = 0; i < 200; i++) {
      const started = performance.now()
      const response = await request(`${baseUrl}/agents/${instantAgent}/conversation`, {
        method: "POST",
        headers,
        body: JSON.stringify({ message: "Stream it", stream: true })
      })
      for await (const _ of response.body) {
        firstBytes.push(performance.now() - started)
        break
      }
      await response.body.dump()
    }
    firstBytes.sort((a, b) => a - b)

    // Memory with many streams held open.
    const rssBefore = procStatusKb(pid, "VmRSS")
    const streams = Number(flags.streams)
    const dispatcher = new Agent({ connections: streams + 10, pipelining: 0 })
    const controller = new AbortController()
    let started = 0
    const opened = Array.from({ length: streams }, async () => {
      const response = await request(`${baseUrl}/agents/${holdAgent}/conversation`, {
        method: "POST",
        headers,
        body: JSON.stringify({ message: "Hold on", stream: true }),
        dispatcher,
        signal: controller.signal
      })
      // The first frame (`event: start`) says the turn runs; the body stays open, paused, so the
      // server keeps the stream and its turn (breaking out of the body would disconnect).
      await new Promise<void>((resolve, reject) => {
        response.body.once("data", () => {
          started++
          response.body.pause()
          resolve()
        })
        response.body.once("error", reject)
      })
    })
    const deadline = Date.now() + 60_000
    while ((started < streams || model.held() < streams) && Date.now() < deadline) await sleep(200)
    const rssOpen = procStatusKb(pid, "VmRSS")
    const held = model.held()
    controller.abort()
    await Promise.allSettled(opened)
    await dispatcher.close().catch(() => undefined)

    console.log(plan.describe("bench:runs", { server: "svc", runner: "load generator and fake model" }))
    console.log()
    console.log(
      table(
        ["scenario", "conns", "requests", ...loadColumns],
        results.map(([label, r]) => [label, String(r.connections), String(r.requests), ...loadCells(r)])
      )
    )
    console.log(recorded)
    console.log()
    console.log(
      `time to first byte of a streamed reply (fake model, sequential, ${firstBytes.length}): ` +
        `p50 ${fmt(percentile(firstBytes, 50), 2)} ms, p99 ${fmt(percentile(firstBytes, 99), 2)} ms, max ${fmt(firstBytes.at(-1) ?? null, 2)} ms`
    )
    const perStream = rssBefore !== null && rssOpen !== null ? (rssOpen - rssBefore) / Math.max(1, started) : null
    console.log(
      `open streams: ${started} of ${streams} started (${held} held at the model); server RSS ` +
        `${fmt(rssBefore === null ? null : rssBefore / 1024)} MB before, ${fmt(rssOpen === null ? null : rssOpen / 1024)} MB with them open ` +
        `(${fmt(perStream)} KB per stream)`
    )
  } finally {
    await cleanup()
    await model.close()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
