/**
 * The signup webhook on a real server and a local receiver: `svc portals webhook` (the secret
 * printed once, URLs checked), a marked test event, the `end_user.signup` delivery with the exact
 * payload and a signature the SDK's verifier accepts, retries with the configured delays until
 * success, four failures then give-up and a manual redelivery, once per end user, nothing when
 * disabled, a delivery that survives `kill -9` of `svc serve`, and `svc listen --forward-to`.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { verifyWebhook } from "../../sdk/index.js"
import { PortalService } from "../../server/provisioning/portals/service.js"
import { WebhookService } from "../../server/webhooks/service.js"
import { backendDataDir, expectFailure, removeDataDirs, serveProcess, start, svc, svcJson } from "../cli/helpers.js"
import { sql } from "../support/fixtures.js"
import { knownTestDatabase, ManualClock, startTestServer, type TestServer } from "../support/server.js"
import { type Receiver, startReceiver } from "./receiver.js"

let server: TestServer
let receiver: Receiver
let organizationId: string
let portal: { id: string; name: string }
let secret: string

const cli = (args: ReadonlyArray<string>) => svcJson(args, server.dataDir)
const endUser = (n: number) => ({ id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`, email: `person${n}@example.com`, createdAt: "2026-11-23T10:00:00.000Z", fullName: null })
const enqueue = (user: ReturnType<typeof endUser>, at = portal) =>
  server.admin(Effect.flatMap(WebhookService, (webhooks) => webhooks.enqueueSignup({ organizationId, portal: at, endUser: user })))
const deliveries = () => cli(["portals", "deliveries", "--org", "default", portal.id]).then((d) => d.deliveries as Array<any>)
/**
 * Moves the server's clock on so the next attempt is due, waits for the receiver to have `n`
 * requests and for the server to have recorded the attempt (moving the clock before that would
 * schedule the next attempt from the moved clock). (Events are enqueued on the system clock of the admin side, up to a few seconds ahead
 * of the server's hand-driven clock: a new event is made due by moving a minute on.)
 */
const nextAttempt = async (seconds: number, n: number) => {
  server.clock.advance(seconds * 1000)
  await receiver.waitFor(n)
  await settled()
}
/** Waits until no attempt is in flight (its outcome recorded and the next one scheduled on the server's clock). */
const settled = () =>
  expect
    .poll(async () => (await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM webhook_deliveries WHERE lease_until IS NOT NULL`))[0]!.n)
    .toBe(0)

beforeAll(async () => {
  receiver = await startReceiver()
  server = await startTestServer({ clock: new ManualClock(Date.now()), server: { webhooks: { pollMs: 20 } } })
  organizationId = server.organization!.id
  portal = await server.admin(Effect.flatMap(PortalService, (portals) => portals.create(organizationId, { name: "Customer portal" })))
})
afterAll(async () => {
  await server.stop()
  await receiver.close()
  await removeDataDirs()
})
beforeEach(() => {
  receiver.received.length = 0
  receiver.answer()
})

describe("svc portals webhook", () => {
  it("refuses a URL that is not http(s) or reaches a private network, storing nothing", async () => {
    for (const url of ["ftp://127.0.0.1/hook", "http://10.1.2.3/hook", "http://169.254.169.254/latest", "not a url"]) {
      const line = expectFailure(await svc(["portals", "webhook", "--org", "default", portal.id, "--url", url, "--enable"], server.dataDir), 1)
      expect(line).toContain("url:")
    }
    expect(await sql(server, (db) => db`SELECT * FROM portal_webhooks`)).toEqual([])
  })

  it("prints the signing secret once, on the first enable; disabling and enabling again keep it", async () => {
    const first = await cli(["portals", "webhook", "--org", "default", portal.id, "--url", receiver.url, "--enable"])
    expect(first).toEqual({
      webhook: { portalId: portal.id, url: receiver.url, enabled: true, createdAt: expect.any(String), updatedAt: expect.any(String) },
      secret: expect.stringMatching(/^whsec_[0-9A-Za-z]{40}$/)
    })
    secret = first.secret
    const off = await cli(["portals", "webhook", "--org", "default", portal.id, "--disable"])
    expect(off).toMatchObject({ webhook: { enabled: false }, secret: null })
    const on = await cli(["portals", "webhook", "--org", "default", portal.id, "--enable"])
    expect(on).toMatchObject({ webhook: { enabled: true, url: receiver.url }, secret: null })
    const human = await svc(["portals", "webhook", "--org", "default", portal.id, "--enable"], server.dataDir)
    expect(human.code).toBe(0)
    expect(human.stdout).not.toContain("whsec_")
  })

  it("is not_found for another organization's Portal", async () => {
    await server.createOrganization("other")
    const line = expectFailure(await svc(["portals", "webhook", "--org", "other", portal.id, "--url", receiver.url, "--enable"], server.dataDir), 1)
    expect(line).toContain(`No Portal '${portal.id}'`)
  })
})

describe("deliveries", () => {
  it("webhook-test sends a clearly marked test event the SDK verifies, recorded as delivered", async () => {
    const sent = await cli(["portals", "webhook-test", "--org", "default", portal.id])
    expect(sent.delivery).toMatchObject({ test: true, status: "delivered", attempts: [{ attempt: 1, manual: true, statusCode: 200, error: null }] })
    const [request] = receiver.received
    expect(request!.headers["x-service-test"]).toBe("true")
    const verified = verifyWebhook(request!.rawBody, request!.headers, secret)
    expect(verified).toMatchObject({ ok: true, event: { event: "end_user.signup", test: true, toolsetId: portal.id, toolsetName: "Customer portal" } })
  })

  it("delivers end_user.signup with the spec's payload and headers, signed over the raw body", async () => {
    expect(await enqueue(endUser(1))).toBe(true)
    await nextAttempt(60, 1)
    const [request] = receiver.received
    expect(request!.headers["content-type"]).toBe("application/json")
    expect(request!.headers["x-service-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/)
    expect(Math.abs(Number(request!.headers["x-service-timestamp"]) - Date.now() / 1000)).toBeLessThan(30)
    expect(JSON.parse(request!.rawBody)).toEqual({
      event: "end_user.signup",
      toolsetId: portal.id,
      toolsetName: "Customer portal",
      organizationId,
      endUser: endUser(1),
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    })
    expect(verifyWebhook(request!.rawBody, request!.headers, secret).ok).toBe(true)
    expect(verifyWebhook(request!.rawBody, request!.headers, "whsec_wrong")).toMatchObject({ ok: false, reason: "bad_signature" })
    expect(verifyWebhook(`${request!.rawBody} `, request!.headers, secret)).toMatchObject({ ok: false, reason: "bad_signature" })
    await expect.poll(async () => (await deliveries()).find((d) => d.endUserId === endUser(1).id)?.status).toBe("delivered")
  })

  it("retries a failed delivery after the configured delays until it succeeds", async () => {
    receiver.answer(500, 503)
    await enqueue(endUser(2))
    await nextAttempt(60, 1)
    await nextAttempt(5, 1)
    expect(receiver.received).toHaveLength(1)
    await nextAttempt(6, 2)
    await nextAttempt(61, 3)
    const delivery = (await deliveries()).find((d) => d.endUserId === endUser(2).id)
    await expect.poll(async () => (await deliveries()).find((d) => d.endUserId === endUser(2).id)?.status).toBe("delivered")
    expect(delivery.attempts.map((a: any) => a.statusCode).slice(0, 2)).toEqual([500, 503])
    for (const request of receiver.received) expect(verifyWebhook(request.rawBody, request.headers, secret).ok).toBe(true)
    expect(new Set(receiver.received.map((r) => r.rawBody)).size).toBe(1)
  })

  it("gives up after four attempts in all; a redelivery sends it again", async () => {
    receiver.answer(500, 500, 500, 500)
    await enqueue(endUser(3))
    await nextAttempt(60, 1)
    await nextAttempt(11, 2)
    await nextAttempt(61, 3)
    await nextAttempt(301, 4)
    await expect.poll(async () => (await deliveries()).find((d) => d.endUserId === endUser(3).id)?.status).toBe("failed")
    server.clock.advance(3_600_000)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(receiver.received).toHaveLength(4)
    const failed = (await deliveries()).find((d) => d.endUserId === endUser(3).id)
    expect(failed.attempts.map((a: any) => [a.attempt, a.statusCode, a.manual])).toEqual([[1, 500, false], [2, 500, false], [3, 500, false], [4, 500, false]])
    const again = await cli(["portals", "redeliver", "--org", "default", failed.id])
    expect(again.delivery).toMatchObject({ status: "delivered", attempts: [{}, {}, {}, {}, { attempt: 5, manual: true, statusCode: 200 }] })
    expect(receiver.received).toHaveLength(5)
  })

  it("fires once per end user: a second first-sign-in event (another Portal, or at once) records nothing", async () => {
    const second = await server.admin(Effect.flatMap(PortalService, (portals) => portals.create(organizationId, { name: "Partner portal" })))
    await cli(["portals", "webhook", "--org", "default", second.id, "--url", receiver.url, "--enable"])
    const outcomes = await Promise.all([enqueue(endUser(4)), enqueue(endUser(4), second), enqueue(endUser(4))])
    expect(outcomes.filter(Boolean)).toHaveLength(1)
    expect(await sql(server, (db) => db`SELECT count(*) AS n FROM webhook_deliveries WHERE end_user_id = ${endUser(4).id}`)).toEqual([{ n: 1 }])
  })

  it("records nothing while the webhook is disabled", async () => {
    await cli(["portals", "webhook", "--org", "default", portal.id, "--disable"])
    expect(await enqueue(endUser(5))).toBe(false)
    expect(await sql(server, (db) => db`SELECT count(*) AS n FROM webhook_deliveries WHERE end_user_id = ${endUser(5).id}`)).toEqual([{ n: 0 }])
    await cli(["portals", "webhook", "--org", "default", portal.id, "--enable"])
  })
})

describe("durability", () => {
  it("a delivery enqueued before kill -9 of svc serve is delivered after the restart", { timeout: 60_000 }, async () => {
    const dataDir = await backendDataDir()
    const first = await serveProcess(dataDir, ["--json", "--webhook-retry-delays", "0.5,0.5,0.5"])
    const ready = JSON.parse(first.stdout().trim().split("\n")[0]!)
    const orgId = ready.organization.id as string
    const { openAdmin } = await import("../../server/admin.js")
    const admin = openAdmin({ dataDir, database: knownTestDatabase(dataDir) })
    try {
      const made = await admin.run(Effect.flatMap(PortalService, (portals) => portals.create(orgId, { name: "Durable" })))
      const configured = await svcJson(["portals", "webhook", "--org", "default", made.id, "--url", receiver.url, "--enable"], dataDir)
      receiver.answer(500)
      await admin.run(
        Effect.flatMap(WebhookService, (webhooks) => webhooks.enqueueSignup({ organizationId: orgId, portal: made, endUser: endUser(9) }))
      )
      await receiver.waitFor(1)
      // Killed after the first attempt is recorded: one killed mid-attempt keeps its claim for the
      // attempt's time limit plus 30 s before another process may send it (another test's subject).
      await expect
        .poll(async () => (await svcJson(["portals", "deliveries", "--org", "default", made.id], dataDir)).deliveries[0].attempts.length, { timeout: 10_000 })
        .toBe(1)
      await first.stop("SIGKILL")
      const second = await serveProcess(dataDir, ["--json", "--webhook-retry-delays", "0.5,0.5,0.5"])
      try {
        await receiver.waitFor(2, 20_000)
        const last = receiver.received[1]!
        expect(verifyWebhook(last.rawBody, last.headers, configured.secret)).toMatchObject({ ok: true, event: { endUser: { id: endUser(9).id } } })
        const listed = await svcJson(["portals", "deliveries", "--org", "default", made.id], dataDir)
        await expect
          .poll(async () => (await svcJson(["portals", "deliveries", "--org", "default", made.id], dataDir)).deliveries[0].status)
          .toBe("delivered")
        expect(listed.deliveries).toHaveLength(1)
      } finally {
        await second.stop()
      }
    } finally {
      await admin.close()
    }
  })
})

describe("svc listen --forward-to", () => {
  it("forwards each event recorded from now on, signed with the Portal's secret, one line each; earlier ones are not replayed", async () => {
    const local = await startReceiver()
    const listening = start(["listen", "--forward-to", local.url, "--org", "default", "--interval", "20", "--json"], server.dataDir)
    try {
      await expect.poll(() => listening.stderr()).toContain(`to ${local.url}`)
      await enqueue(endUser(20))
      await local.waitFor(1)
      // webhook-test keeps its delivery from the server's worker by its due time, on the CLI's system
      // clock; earlier tests moved the server's hand-driven clock an hour and more ahead, which would
      // make it due there at once (both would attempt it and number the attempt 1). Bring the server's
      // clock back to the system's, as every deployment has it.
      server.clock.ms = Date.now()
      await cli(["portals", "webhook-test", "--org", "default", portal.id])
      await local.waitFor(2)
      const [signup, test] = local.received
      expect(verifyWebhook(signup!.rawBody, signup!.headers, secret)).toMatchObject({ ok: true, event: { endUser: { id: endUser(20).id } } })
      expect(verifyWebhook(test!.rawBody, test!.headers, secret)).toMatchObject({ ok: true, event: { test: true } })
      await expect.poll(() => listening.stdout().trim().split("\n").length).toBe(2)
      const lines = listening.stdout().trim().split("\n").map((text) => JSON.parse(text))
      expect(lines[0]).toMatchObject({ event: "end_user.signup", test: false, email: endUser(20).email, forwardedTo: local.url, statusCode: 200, error: null })
      expect(lines[1]).toMatchObject({ test: true, statusCode: 200 })
    } finally {
      const ended = await listening.stop()
      expect(ended.code).toBe(0)
      await local.close()
    }
  })
})
