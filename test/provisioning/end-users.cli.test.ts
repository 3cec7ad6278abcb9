/**
 * `svc end-users add|list|get|revoke` through the SDK against a real server: JSON documents for
 * scripts, readable text for people, API refusals as one line with the API's code.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectEnvelope, expectFailure, svc } from "../cli/helpers.js"
import { sql } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createGroup, createPlan } from "./support.js"

let server: TestServer
let env: Record<string, string>
let gold: { id: string }
let silver: { id: string }
let staff: string

beforeAll(async () => {
  server = await startTestServer()
  env = { SVC_BASE_URL: server.baseUrl, SVC_API_KEY: server.key }
  gold = await createPlan(server, "Gold", 500)
  silver = await createPlan(server, "Silver", 100)
  staff = await createGroup(server, "Staff")
})
afterAll(() => server.stop())

const run = (...args: Array<string>) => svc(["end-users", ...args], undefined, env)
const json = async (...args: Array<string>) => {
  const result = await run(...args, "--json")
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

describe("svc end-users", () => {
  it("adds an end user with plans and a group (JSON), updates it on a second add, and emails only with --send-email", async () => {
    const created = await json("add", "--email", "ada@example.com", "--name", "Ada", "--plan", gold.id, "--plan", silver.id, "--group", staff)
    expect(created).toMatchObject({ created: true, endUser: { email: "ada@example.com", fullName: "Ada" }, groupsJoined: [staff], grantsCreated: 0 })
    expect(created.subscriptions.map((s: { tierPlanName: string }) => s.tierPlanName)).toEqual(["Gold", "Silver"])
    const updated = await json("add", "--email", "ADA@example.com", "--send-email")
    expect(updated).toMatchObject({ created: false, endUser: created.endUser })
    expect(await sql(server, (db) => db`SELECT kind FROM outbox_emails WHERE recipient = 'ada@example.com'`)).toEqual([{ kind: "end_user_welcome" }])
    server.clock.advance(1_000)
    const human = await run("add", "--email", "bob@example.com", "--plan", gold.id)
    expect(human.code).toBe(0)
    expect(human.stdout).toContain("Created end user bob@example.com")
    expect(human.stdout).toContain("Gold")
    expect(human.stdout).toContain("500")
  })

  it("lists (a table, or the page as JSON), filters by email, gets a summary, and revokes", async () => {
    const page = await json("list")
    expect(page.endUsers.map((u: { email: string }) => u.email)).toEqual(["ada@example.com", "bob@example.com"])
    expect(page.nextCursor).toBeNull()
    const first = await json("list", "--limit", "1")
    const second = await json("list", "--limit", "1", "--cursor", first.nextCursor)
    expect(second.endUsers.map((u: { email: string }) => u.email)).toEqual(["bob@example.com"])
    const table = await run("list", "--email", "Bob@Example.com")
    expect(table.code).toBe(0)
    expect(table.stdout).toContain("bob@example.com")
    expect(table.stdout).not.toContain("ada@example.com")
    expect((await run("list", "--email", "nobody@example.com")).stdout).toContain("No end user with the email nobody@example.com.")
    const ada = page.endUsers[0]
    const read = await json("get", ada.id)
    expect(read.endUser).toMatchObject({ id: ada.id, state: "active", groupIds: [staff] })
    const summary = await run("get", ada.id)
    expect(summary.stdout).toContain("End user ada@example.com")
    expect(summary.stdout).toContain("Silver")
    expect(await json("revoke", ada.id)).toEqual({ ok: true, revoked: true })
    expect((await run("revoke", ada.id)).stdout).toContain(`Revoked end user ${ada.id}`)
    expect((await json("get", ada.id)).endUser.state).toBe("revoked")
  })

  it("turns API refusals into one line with the code (exit 1) and the envelope with --json", async () => {
    const refused = await run("add", "--email", "carl@example.com", "--plan", "00000000-0000-4000-8000-000000000000", "--json")
    expectFailure(refused, 1, true)
    expect(expectEnvelope(refused.stdout).code).toBe("tier_not_found")
    const missing = await run("get", "00000000-0000-4000-8000-000000000000")
    expect(expectFailure(missing, 1)).toMatch(/not_found/)
    expectFailure(await run("add", "--name", "No email"), 2)
    const reader = await server.createKey({ name: "reader", scopes: ["end_users:read"] })
    const scoped = await svc(["end-users", "revoke", "00000000-0000-4000-8000-000000000000", "--api-key", reader], undefined, env)
    expect(expectFailure(scoped, 1)).toMatch(/insufficient_scope/)
  })
})
