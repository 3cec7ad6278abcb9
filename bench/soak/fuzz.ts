/**
 * Fuzz part: at least `count` requests generated from the running server's OpenAPI document
 * (bench/soak/fuzz-requests.ts), every operation in turn, `concurrency` in flight. Any 5xx, any
 * dropped connection and any non-2xx answer without the `{error:{code,message}}` envelope is a
 * failure, printed with a minimal reproduction (bench/soak/minimize.ts). With `SOAK_FUZZ_TRACE=1`
 * the message of every 400 goes to stderr, to see what the generated requests run into.
 */
import fc from "fast-check"
import type { Child } from "../children.js"
import { procCpuMs } from "../children.js"
import { readOperations } from "./document.js"
import { requestsOf } from "./fuzz-requests.js"
import { hasErrorEnvelope, type SoakAnswer, SoakClient, type SoakRequest } from "./http.js"
import { describeRequest, minimize } from "./minimize.js"
import type { SoakReady } from "./protocol.js"
import { type SeededIds, seedOrganization } from "./seed.js"

/** Settings of one fuzz run. */
export interface FuzzOptions {
  readonly count: number
  readonly concurrency: number
  readonly seed: number
  /** Only the operations whose `METHOD /template` contains this (a focused run; the suite's bar needs all). */
  readonly only?: string | undefined
}

/** One request that broke a rule. */
export interface FuzzFailure {
  readonly operation: string
  readonly why: string
  readonly request: SoakRequest
  readonly answer: string
}

/** What the fuzz part measured. */
export interface FuzzResult {
  readonly requests: number
  readonly operations: number
  /** Operations in the document (more than `operations` in a focused run). */
  readonly documentOperations: number
  readonly seconds: number
  readonly statuses: Readonly<Record<string, number>>
  readonly serverCpuUsPerRequest: number | null
  readonly failures: ReadonlyArray<FuzzFailure>
  /** Failures seen in all (only the first of each operation and kind is kept). */
  readonly failureCount: number
}

/**
 * Why an answer breaks the rules, or null when it keeps them. The one 5xx allowed is 502
 * `run_failed` (conventions: the model failed or a Transaction's reply did not fit its schema;
 * docs/decisions.md: an App with no published member left), which the fuzz reaches by editing Apps.
 */
export const ruleBroken = (request: SoakRequest, answer: SoakAnswer): string | null => {
  if (!answer.ok) return `dropped connection (${answer.error})`
  if (answer.status === 502 && answer.json?.error?.code === "run_failed") return null
  if (answer.status >= 500) return `${answer.status}`
  if (answer.status >= 300 && request.method !== "HEAD" && !hasErrorEnvelope(answer.json)) return `${answer.status} without the error envelope`
  return null
}

/** Bodies over the 4.5 MB limit, sent now and then. */
const oversized = (path: string, key: string): SoakRequest => ({
  method: "POST",
  path,
  headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  body: JSON.stringify({ name: "x".repeat(4_600_000) })
})

/** Segments no id is spelled with: malformed and odd escapes, dot segments, `;`, `~`, empty. */
const oddSegments = ["%ZZ", "%E2", "%E2%82", "%00", "%2F", "..", ".", ";x=1", "x;y", "~", ""]

/**
 * Requests to the doors in front of the API router with odd segments where a name goes: an MCP
 * workspace address and a Portal. Their refusals are JSON-RPC errors or pages, not the envelope,
 * so only a 5xx or a dropped connection breaks the rule ({@link frontDoorRuleBroken}).
 */
const frontDoorRequests = (key: string): Array<SoakRequest> =>
  oddSegments.flatMap((segment): Array<SoakRequest> => [
    {
      method: "POST",
      path: `/api/v1/orgs/${segment}/mcp`,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
    },
    { method: "GET", path: `/portals/${segment}/apps/${segment}` }
  ])

/** The rule for {@link frontDoorRequests}: answered, and never with a 5xx. */
const frontDoorRuleBroken = (answer: SoakAnswer): string | null =>
  !answer.ok ? `dropped connection (${answer.error})` : answer.status >= 500 ? `${answer.status}` : null

/** Runs the fuzz part against a fresh server. */
export const runFuzz = async (server: Child<SoakReady>, options: FuzzOptions): Promise<FuzzResult> => {
  const orgs = server.ready.organizations
  if (!orgs) throw new Error("fuzz needs a fresh server")
  const client = new SoakClient(server.ready.origin, options.concurrency)
  try {
    const other = await seedOrganization(client, server, orgs.b)
    const { doc, operations: all } = await readOperations(client)
    const operations = all.filter((op) => options.only === undefined || `${op.method} ${op.template}`.includes(options.only))
    // Fresh objects now and then: the fuzz deletes what it finds.
    let own: SeededIds | undefined
    const reseed = async (round: number) => {
      own = await seedOrganization(client, server, orgs.a, `-${round}`, own)
      const context = {
        doc,
        ids: [...Object.values(own), other.page, other.knowledgebase],
        own,
        breakRate: 0.08,
        keys: { own: [orgs.a.orgKey, orgs.a.personalKey], other: orgs.b.orgKey }
      }
      return operations.map((op) => ({ name: `${op.method} ${op.template}`, arbitrary: requestsOf(op, context) }))
    }
    let arbitraries = await reseed(0)
    const statuses: Record<string, number> = {}
    const failures = new Map<string, FuzzFailure>()
    let failureCount = 0
    let sent = 0
    const perRound = 10
    const cpuBefore = procCpuMs(server.ready.pid)
    const started = performance.now()
    for (let round = 0; sent < options.count; round++) {
      if (round > 0 && round % 8 === 0) arbitraries = await reseed(round)
      const batch: Array<{ name: string; request: SoakRequest }> = []
      arbitraries.forEach(({ name, arbitrary }, index) => {
        for (const request of fc.sample(arbitrary, { numRuns: perRound, seed: options.seed + round * 1_000 + index })) batch.push({ name, request })
      })
      if (round % 20 === 0) batch.push({ name: "POST /knowledgebases (oversized)", request: oversized("/api/v1/knowledgebases", orgs.a.orgKey) })
      if (round % 20 === 10) for (const request of frontDoorRequests(orgs.a.personalKey)) batch.push({ name: `${request.method} front door`, request })
      let next = 0
      const worker = async () => {
        while (next < batch.length) {
          const { name, request } = batch[next++]!
          const answer = await client.send(request)
          sent++
          const status = answer.ok ? String(answer.status) : "dropped"
          statuses[status] = (statuses[status] ?? 0) + 1
          if (process.env.SOAK_FUZZ_TRACE && answer.ok && answer.status === 400) console.error(name, "|", String(answer.json?.error?.message).slice(0, 90))
          const why = name.endsWith("front door") ? frontDoorRuleBroken(answer) : ruleBroken(request, answer)
          if (why === null) continue
          failureCount++
          const kind = `${name} ${why.split(" ")[0]}`
          if (!failures.has(kind)) failures.set(kind, { operation: name, why, request, answer: answer.ok ? answer.text.slice(0, 300) : answer.error })
        }
      }
      await Promise.all(Array.from({ length: options.concurrency }, worker))
    }
    const seconds = (performance.now() - started) / 1000
    const cpuAfter = procCpuMs(server.ready.pid)
    const minimized: Array<FuzzFailure> = []
    for (const failure of [...failures.values()].slice(0, 25)) {
      const broken = failure.operation.endsWith("front door") ? (_: SoakRequest, answer: SoakAnswer) => frontDoorRuleBroken(answer) : ruleBroken
      minimized.push({ ...failure, request: await minimize(client, failure.request, (request, answer) => broken(request, answer) !== null) })
    }
    return {
      requests: sent,
      operations: operations.length,
      documentOperations: all.length,
      seconds: Number(seconds.toFixed(1)),
      statuses,
      serverCpuUsPerRequest: cpuBefore === null || cpuAfter === null ? null : Math.round(((cpuAfter - cpuBefore) * 1000) / sent),
      failures: minimized,
      failureCount
    }
  } finally {
    await client.close()
  }
}

/** Prints the figures of a fuzz run; answers whether it passed. */
export const reportFuzz = (result: FuzzResult, minimum: number): boolean => {
  console.log(
    `fuzz: ${result.requests} requests over ${result.operations} operations in ${result.seconds} s ` +
      `(${Math.round(result.requests / result.seconds)} req/s, server CPU ${result.serverCpuUsPerRequest ?? "?"} us/request)`
  )
  console.log(`fuzz: statuses ${JSON.stringify(result.statuses)}`)
  console.log(`fuzz: failures ${result.failureCount}`)
  for (const failure of result.failures) {
    console.log(`  FAIL ${failure.operation}: ${failure.why}\n    ${describeRequest(failure.request)}\n    answer: ${failure.answer}`)
  }
  return result.failureCount === 0 && result.requests >= minimum && result.operations >= result.documentOperations
}
