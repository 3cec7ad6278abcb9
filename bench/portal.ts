/**
 * `npm run bench:portal`: Portal sign-in and the signup webhook, measured from a second process.
 *
 * - Sign-ins end to end: `--people` provisioned end users, `--concurrency` (20) at a time, each
 *   GETting the Portal page, asking for a code, reading it from the outbox and posting it (session
 *   cookie): sign-ins per second, p50/p99 of each step and of the whole, errors (must be 0).
 * - Webhook deliveries: each of those first sign-ins fires `end_user.signup` to a receiver in this
 *   process (answering 200 at once): deliveries per second from the first enqueue to the last
 *   arrival, lag p50/p99 (event timestamp → arrival), every signature checked with the SDK's
 *   `verifyWebhook`, each person's event exactly once.
 * - Then a backlog: `--backlog` events recorded at once (no sign-ins running), drained by the
 *   worker alone: deliveries per second from the first arrival to the last, same checks.
 *
 *   node dist/bench/portal.js [--people 2000] [--concurrency 20] [--warmup 200] [--backlog 2000] [--keep-data] [--json] [--profile DIR]
 *
 * `--profile DIR` writes the server's V8 CPU profile there (summarize it with profile-summary.js).
 *
 * Exits non-zero when a sign-in failed or a delivery was missing, duplicated or not verified.
 */
import Database from "better-sqlite3"
import { mkdtempSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { createInterface } from "node:readline"
import { parseArgs } from "node:util"
import { type Child, cleanupOnExit, planCpus, procCpuMs, spawnChild } from "./children.js"
import { signInLoad, signInSteps } from "./portal-sign-in.js"
import { checkDeliveries, startWebhookReceiver } from "./portal-webhooks.js"
import type { PortalReady } from "./protocol.js"
import { fmt, table } from "./report.js"

const { values: flags } = parseArgs({
  options: {
    people: { type: "string", default: "2000" },
    concurrency: { type: "string", default: "20" },
    warmup: { type: "string", default: "200" },
    backlog: { type: "string", default: "2000" },
    "keep-data": { type: "boolean", default: false },
    json: { type: "boolean", default: false },
    profile: { type: "string" }
  }
})
const people = Number(flags.people)
const concurrency = Number(flags.concurrency)
const warmup = Number(flags.warmup)
const backlog = Number(flags.backlog)

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0

/** Latency summary of milliseconds. */
const latency = (ms: ReadonlyArray<number>) => {
  const sorted = [...ms].sort((a, b) => a - b)
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? 0 }
}

/** Asks the launcher to record `count` signup events at once; resolves with when they were committed (ms since the epoch). */
const enqueueBacklog = (child: Child<PortalReady>, count: number): Promise<number> =>
  new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.process.stdout })
    const timer = setTimeout(() => done(new Error(`no backlog answer within 60 s\n${child.stderrTail()}`)), 60_000)
    const done = (error: Error | null, at = 0) => {
      clearTimeout(timer)
      lines.close()
      if (error) reject(error)
      else resolve(at)
    }
    lines.on("line", (line) => {
      try {
        const answer = JSON.parse(line) as { backlog?: number; enqueuedAt?: number; error?: string }
        if (answer.backlog !== count) return
        if (answer.enqueuedAt === undefined) done(new Error(`backlog: ${answer.error}`))
        else done(null, answer.enqueuedAt)
      } catch {
        // not the answer
      }
    })
    child.process.stdin.write(`backlog ${count}\n`)
  })

const emailsOf = (prefix: string, count: number) => Array.from({ length: count }, (_, n) => `${prefix}${n}@example.com`)

const main = async (): Promise<boolean> => {
  const plan = await planCpus()
  const header = plan.describe("bench:portal", { server: "svc", runner: "load generator and webhook receiver" })
  console.error(header)
  const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-portal-"))
  const receiver = await startWebhookReceiver()
  const children: Array<Child<PortalReady>> = []
  const cleanup = cleanupOnExit(children, () => dataDir, flags["keep-data"], "the Portal benchmark")
  let db: Database.Database | null = null
  try {
    console.error(`seeding ${people} + ${warmup} end users ...`)
    const svc = await spawnChild<PortalReady>({
      name: "svc",
      script: join(dirname(fileURLToPath(import.meta.url)), "portal-launcher.js"),
      args: ["--data-dir", dataDir, "--webhook-url", receiver.url, "--people", String(people), "--warmup", String(warmup)],
      cpu: plan.serverCpu,
      nodeFlags: flags.profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", flags.profile],
      logFile: join(dataDir, "svc.stderr.log")
    })
    children.push(svc)
    const ready = svc.ready
    db = new Database(ready.databaseFile, { readonly: true, fileMustExist: true })
    console.error(`warming up with ${warmup} sign-ins at a Portal without a webhook ...`)
    const warm = await signInLoad({ origin: ready.origin, portalId: ready.warmupPortalId, emails: emailsOf("warmup", warmup), concurrency, db })
    const expected = emailsOf("person", people)
    console.error(`signing ${people} people in, ${concurrency} at a time ...`)
    const cpuBefore = procCpuMs(ready.pid)
    const load = await signInLoad({ origin: ready.origin, portalId: ready.portalId, emails: expected, concurrency, db })
    const cpuAfter = procCpuMs(ready.pid)
    const receivedWhenSignInsEnded = receiver.arrivals.length
    console.error(`waiting for ${load.signedIn} webhook deliveries (${receivedWhenSignInsEnded} arrived so far) ...`)
    await receiver.waitFor(load.signedIn, 60_000)
    // A short grace period so a duplicate delivery would be counted too.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const firstEnqueue = db.prepare<[], { at: string | null }>("SELECT MIN(created_at) AS at FROM webhook_deliveries WHERE test = 0").get()?.at ?? null
    const attempts = db.prepare<[], { attempts: number; failed: number }>(
      "SELECT COUNT(*) AS attempts, COALESCE(SUM(CASE WHEN status_code BETWEEN 200 AND 299 THEN 0 ELSE 1 END), 0) AS failed FROM webhook_attempts"
    ).get()!
    const deliveries = checkDeliveries(receiver.take(), ready.webhookSecret, expected, firstEnqueue === null ? Date.now() : Date.parse(firstEnqueue))
    let drained: ReturnType<typeof checkDeliveries> | null = null
    if (backlog > 0) {
      console.error(`recording a backlog of ${backlog} events and waiting for the worker to drain it ...`)
      const enqueuedAt = await enqueueBacklog(svc, backlog)
      await receiver.waitFor(backlog, 120_000)
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      drained = checkDeliveries(receiver.take(), ready.webhookSecret, emailsOf("backlog", backlog), enqueuedAt)
    }
    const loadAverage = loadavg().map((n) => Number(n.toFixed(2)))

    const signInErrors = Object.values(load.errors).reduce((a, b) => a + b, 0) + Object.values(warm.errors).reduce((a, b) => a + b, 0)
    const allOnce = (check: ReturnType<typeof checkDeliveries>) =>
      check.received === check.expected && check.verified === check.received && check.missing === 0 && check.duplicated === 0 && check.unexpected === 0
    const deliveriesOk = allOnce(deliveries) && (drained === null || allOnce(drained))
    const steps = Object.fromEntries(signInSteps.map((step) => [step, latency(load.stepMs[step])]))
    const serverCpuMsPerSignIn = cpuBefore === null || cpuAfter === null || load.signedIn === 0 ? null : (cpuAfter - cpuBefore) / load.signedIn
    const lag = latency(deliveries.lagMs)
    const result = {
      machine: { ...plan.json("svc", "runner"), loadAverageAtEnd: loadAverage },
      signIns: {
        people: load.people,
        concurrency: load.concurrency,
        signedIn: load.signedIn,
        seconds: Number(load.seconds.toFixed(2)),
        signInsPerSecond: Number((load.signedIn / load.seconds).toFixed(1)),
        stepsMs: steps,
        errors: load.errors,
        warmupErrors: warm.errors,
        serverCpuMsPerSignIn: serverCpuMsPerSignIn === null ? null : Number(serverCpuMsPerSignIn.toFixed(2))
      },
      webhooks: {
        expected: deliveries.expected,
        received: deliveries.received,
        receivedWhenSignInsEnded,
        verified: deliveries.verified,
        refused: deliveries.refused,
        missing: deliveries.missing,
        duplicated: deliveries.duplicated,
        unexpected: deliveries.unexpected,
        attempts: attempts.attempts,
        failedAttempts: attempts.failed,
        seconds: Number(deliveries.seconds.toFixed(2)),
        deliveriesPerSecond: Number(deliveries.deliveriesPerSecond.toFixed(1)),
        lagMs: lag
      },
      backlog:
        drained === null
          ? null
          : {
              expected: drained.expected,
              received: drained.received,
              verified: drained.verified,
              refused: drained.refused,
              missing: drained.missing,
              duplicated: drained.duplicated,
              firstArrivalAfterCommitMs: Number((drained.seconds * 1_000 - drained.arrivalSeconds * 1_000).toFixed(0)),
              seconds: Number(drained.arrivalSeconds.toFixed(2)),
              deliveriesPerSecond: Number(drained.arrivalsPerSecond.toFixed(1))
            }
    }
    if (flags.json) console.log(JSON.stringify(result, null, 2))
    else {
      console.log(header)
      console.log(`load average at the end: ${loadAverage.join(", ")}`)
      console.log()
      console.log(
        `sign-ins end to end at one Portal: ${load.signedIn} of ${load.people} people, ${load.concurrency} at a time, in ${fmt(load.seconds, 2)} s = ` +
          `${result.signIns.signInsPerSecond} sign-ins/s, errors ${Object.values(load.errors).reduce((a, b) => a + b, 0)}` +
          `, server CPU ${fmt(result.signIns.serverCpuMsPerSignIn, 2)} ms/sign-in`
      )
      const stepNames = { page: "GET the Portal page", requestCode: "POST sign-in (code request)", readCode: "read the code (outbox, SQL)", verifyCode: "POST verify (code → session)", whole: "whole sign-in" }
      console.log(table(["step", "p50 ms", "p99 ms", "max ms"], signInSteps.map((step) => [stepNames[step], fmt(steps[step]!.p50, 2), fmt(steps[step]!.p99, 2), fmt(steps[step]!.max, 1)])))
      for (const [reason, n] of Object.entries(load.errors)) console.log(`  error: ${reason} × ${n}`)
      console.log()
      console.log(
        `end_user.signup webhooks: ${deliveries.received} received of ${deliveries.expected} expected (${receivedWhenSignInsEnded} by the end of the sign-ins), ` +
          `${deliveries.verified} verified with verifyWebhook, missing ${deliveries.missing}, duplicated ${deliveries.duplicated}, unexpected ${deliveries.unexpected}` +
          `, attempts ${attempts.attempts} (failed ${attempts.failed})`
      )
      for (const [reason, n] of Object.entries(deliveries.refused)) console.log(`  refused: ${reason} × ${n}`)
      console.log(
        table(
          ["deliveries", "seconds", "deliveries/s", "lag p50 ms", "lag p99 ms", "lag max ms"],
          [["first enqueue → last arrival", fmt(deliveries.seconds, 2), fmt(deliveries.deliveriesPerSecond, 1), fmt(lag.p50, 1), fmt(lag.p99, 1), fmt(lag.max, 1)]]
        )
      )
    }
    if (!flags.json && result.backlog !== null) {
      const b = result.backlog
      console.log()
      console.log(
        `backlog drained by the worker alone: ${b.received} received of ${b.expected}, ${b.verified} verified, missing ${b.missing}, duplicated ${b.duplicated}; ` +
          `first arrival ${b.firstArrivalAfterCommitMs} ms after the commit (the worker's poll), then ${b.deliveriesPerSecond} deliveries/s over ${fmt(b.seconds, 2)} s`
      )
    }
    const ok = signInErrors === 0 && load.signedIn === people && deliveriesOk
    if (!ok) console.error("FAILED: a sign-in failed or the deliveries were not each verified exactly once")
    return ok
  } finally {
    db?.close()
    await receiver.close()
    await cleanup()
  }
}

process.exitCode = (await main()) ? 0 : 1
