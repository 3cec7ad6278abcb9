/**
 * The delivery worker makes several attempts at once: a receiver that answers nothing until three
 * requests are waiting gets all three (a worker sending one at a time would wait on the first until
 * its time limit), and each delivery is then recorded delivered after one attempt.
 */
import { Effect } from "effect"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PortalService } from "../../server/provisioning/portals/service.js"
import { WebhookService } from "../../server/webhooks/service.js"
import { sql } from "../support/fixtures.js"
import { ManualClock, startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
let receiverUrl: string
let closeReceiver: () => Promise<void>
let mostWaiting = 0
const waiting: Array<ServerResponse> = []

/** Holds every request until `batch` wait at once, then answers them all 200. */
const startHoldingReceiver = async (batch: number) => {
  const receiver = createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      waiting.push(response)
      mostWaiting = Math.max(mostWaiting, waiting.length)
      if (waiting.length >= batch) for (const held of waiting.splice(0)) held.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  closeReceiver = () =>
    new Promise((resolve) => {
      receiver.closeAllConnections()
      receiver.close(() => resolve())
    })
}

beforeAll(async () => {
  await startHoldingReceiver(3)
  server = await startTestServer({ clock: new ManualClock(Date.now()), server: { webhooks: { pollMs: 20, attemptTimeoutMs: 30_000 } } })
})
afterAll(async () => {
  await server.stop()
  await closeReceiver()
})

describe("the webhook delivery worker", () => {
  it("sends due deliveries at once, so one receiver that is slow to answer holds up no other", async () => {
    const organizationId = server.organization!.id
    const portal = await server.admin(Effect.flatMap(PortalService, (portals) => portals.create(organizationId, { name: "Busy portal" })))
    await server.admin(Effect.flatMap(WebhookService, (webhooks) => webhooks.configure(organizationId, portal.id, { url: receiverUrl, enabled: true })))
    for (const n of [1, 2, 3]) {
      const endUser = { id: `00000000-0000-4000-8000-00000000000${n}`, email: `person${n}@example.com`, createdAt: "2026-11-23T10:00:00.000Z", fullName: null }
      expect(await server.admin(Effect.flatMap(WebhookService, (webhooks) => webhooks.enqueueSignup({ organizationId, portal, endUser })))).toBe(true)
    }
    server.clock.advance(60_000)
    const states = () =>
      sql(server, (db) => db<{ status: string; attempts: number; codes: string }>`SELECT d.status, d.attempts, string_agg(CAST(a.status_code AS TEXT), ',') AS codes
        FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id GROUP BY d.id ORDER BY d.end_user_id`)
    await expect.poll(states, { timeout: 5_000 }).toEqual([
      { status: "delivered", attempts: 1, codes: "200" },
      { status: "delivered", attempts: 1, codes: "200" },
      { status: "delivered", attempts: 1, codes: "200" }
    ])
    expect(mostWaiting).toBe(3)
  })
})
