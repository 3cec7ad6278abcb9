/**
 * `svc portals webhook-test` beside a running server: the test event is sent once, by the command.
 * Its delivery used to be due as soon as it was recorded, so the server's worker, polling the same
 * outbox, could claim it while the command's own attempt was still waiting for the receiver: the
 * receiver got the event twice and the command failed on the second record of attempt 1 (`UNIQUE
 * constraint failed: webhook_attempts.delivery_id, webhook_attempts.attempt`), as the README's tour
 * saw. Here the command runs on the server's data directory (in this process, with the CLI's own
 * runtime, as the real command has), the worker polls every 20 ms and the receiver answers after
 * 400 ms.
 */
import { Effect } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PortalService } from "../../server/provisioning/portals/service.js"
import { WebhookService } from "../../server/webhooks/service.js"
import { removeDataDirs, svcJson } from "../cli/helpers.js"
import { sql } from "../support/fixtures.js"
import { ManualClock, startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
let receiverUrl: string
let closeReceiver: () => Promise<void>
let received = 0

beforeAll(async () => {
  const receiver = createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      received++
      setTimeout(() => response.writeHead(200).end("ok"), 400)
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  closeReceiver = () =>
    new Promise((resolve) => {
      receiver.closeAllConnections()
      receiver.close(() => resolve())
    })
  // The server's clock 5 s ahead of the command's (the system clock): what the command records as due now is due at once for the worker.
  server = await startTestServer({ clock: new ManualClock(Date.now() + 5_000), server: { webhooks: { pollMs: 20, attemptTimeoutMs: 10_000 } } })
})
afterAll(async () => {
  await server.stop()
  await closeReceiver()
  await removeDataDirs()
})

describe("a webhook test event beside the delivery worker", () => {
  it("is sent once, by the test itself, and recorded with one attempt", async () => {
    const organizationId = server.organization!.id
    const portal = await server.admin(Effect.flatMap(PortalService, (portals) => portals.create(organizationId, { name: "Test events" })))
    await server.admin(Effect.flatMap(WebhookService, (webhooks) => webhooks.configure(organizationId, portal.id, { url: receiverUrl, enabled: true })))
    const sent = await svcJson(["portals", "webhook-test", "--org", "default", portal.id], server.dataDir)
    expect(sent.delivery).toMatchObject({ status: "delivered", attempts: [{ attempt: 1, manual: true, statusCode: 200 }] })
    // Long enough for the worker to have sent it again if it could.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(received).toBe(1)
    const attempts = await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM webhook_attempts`)
    expect(Number(attempts[0]!.n)).toBe(1)
  })
})
