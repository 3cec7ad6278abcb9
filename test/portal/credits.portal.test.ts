/**
 * Credits of Portal runs that do not succeed, over HTTP on a real server: a failed run (the model
 * answers 500) gives its credit back to the subscription pool it came from, and an execution a
 * stopped server left `running` gives its credit back to that pool at the next start, never to the
 * organization.
 */
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { organizationId, sql } from "../support/fixtures.js"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fake-openai.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { admit, createPortal, endUser, grant, organizationCredits, plan, pools, PortalClient, publishedApp, subscribe } from "./support.js"

let fake: FakeOpenAi
let dataDir: string
let server: TestServer
let portal: string
let desk: string
let planId: string

const modelOptions = () => ({ model: { baseUrl: fake.baseUrl, defaultModel: "fake-model", backoffMs: 1, maxAttempts: 1 }, runs: { keepAliveMs: 100 } })

beforeAll(async () => {
  fake = await startFakeOpenAi(() => ({ status: 500, error: "the model is down" }))
  dataDir = mkdtempSync(join(tmpdir(), "svc-portal-credits-"))
  server = await startTestServer({ dataDir, server: modelOptions() })
  portal = await createPortal(server, "Help centre")
  desk = await publishedApp(server, "Help desk")
  const made = await plan(server, "Basic", 10)
  planId = made.id
  await grant(server, made.groupId, desk)
  await admit(server, portal, made.groupId)
})
afterAll(async () => {
  await server.stop()
  await fake.close()
  rmSync(dataDir, { recursive: true, force: true })
})

describe("credits of runs that do not succeed", () => {
  it("gives a failed run's credit back to the bonus pool it came from", async () => {
    const id = await endUser(server, "fay@example.com")
    const subscription = await subscribe(server, id, planId, { allowance: 5, bonus: 2 })
    const orgCredits = await organizationCredits(server)
    const client = new PortalClient(server, portal)
    await client.signIn("fay@example.com")
    await client.get(`apps/${desk}`)
    const failed = await client.post(`apps/${desk}`, { message: "Hello", conversation_id: "" })
    expect(failed.status).toBe(502)
    expect(failed.text).toContain("The App could not answer")
    const rows = await sql(server, (db) => db<{ status: string; credits_charged: number; credit_subscription_id: string; credit_pool: string }>`
      SELECT status, credits_charged, credit_subscription_id, credit_pool FROM executions ORDER BY started_at DESC LIMIT 1`)
    expect(rows[0]).toEqual({ status: "failed", credits_charged: 0, credit_subscription_id: subscription, credit_pool: "bonus" })
    expect(await pools(server, subscription)).toEqual({ credits_used: 0, bonus_credits: 2 })
    expect(await organizationCredits(server)).toBe(orgCredits)
  })

  it("gives an abandoned run's credit back to its subscription pool at the next start", async () => {
    const id = await endUser(server, "gil@example.com")
    const subscription = await subscribe(server, id, planId, { allowance: 5, used: 3 })
    const org = await organizationId(server)
    const orgCredits = await organizationCredits(server)
    const at = new Date().toISOString()
    await sql(server, (db) => db`INSERT INTO executions (id, organization_id, kind, target_id, version, draft, conversation_id, status, steps,
        tools_called, credits_charged, started_at, finished_at, error, credit_subscription_id, credit_pool)
      VALUES (${randomUUID()}, ${org}, 'app', ${desk}, 1, 0, NULL, 'running', '[]', '[]', 1, ${at}, NULL, NULL, ${subscription}, 'allowance')`)
    const key = server.key
    await server.stop()
    server = await startTestServer({ dataDir, key, server: modelOptions() })
    expect(await pools(server, subscription)).toEqual({ credits_used: 2, bonus_credits: 0 })
    expect(await organizationCredits(server)).toBe(orgCredits)
  })
})
