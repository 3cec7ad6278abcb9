/**
 * Monthly credits: the anniversary arithmetic, and on a real server the renewal worker setting the
 * balance back to the plan's monthly credits on the monthly anniversary (not before, and once),
 * with the new plan's allowance after a plan change.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addMonths, nextAnniversary } from "../../server/identity/credit-renewal.js"
import { AccountsService } from "../../server/identity/service.js"
import { sql } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { organizationOf, setCredits } from "../support/knowledge.js"

describe("anniversaries", () => {
  it("keeps the day of the month, or the month's last day when it is shorter", () => {
    expect(addMonths("2026-01-31T10:00:00.000Z", 1)).toBe("2026-02-28T10:00:00.000Z")
    expect(addMonths("2026-01-31T10:00:00.000Z", 2)).toBe("2026-03-31T10:00:00.000Z")
    expect(addMonths("2026-11-21T12:00:00.000Z", 2)).toBe("2027-01-21T12:00:00.000Z")
    expect(nextAnniversary("2026-01-15T00:00:00.000Z", "2026-03-15T00:00:00.000Z")).toBe("2026-04-15T00:00:00.000Z")
    expect(nextAnniversary("2026-01-15T00:00:00.000Z", "2026-03-14T23:59:59.999Z")).toBe("2026-03-15T00:00:00.000Z")
  })
})

describe("the renewal worker", () => {
  let server: TestServer
  const day = 24 * 3_600_000
  const renewAt = async () =>
    ((await sql(server, (db) => db<{ at: string | null }>`SELECT credits_renew_at AS at FROM organizations WHERE slug = 'default'`))[0]!).at
  beforeAll(async () => {
    server = await startTestServer({ server: { creditRenewalPollMs: 20 } })
  })
  afterAll(() => server.stop())

  it("schedules the first anniversary, renews on it (not before) to the plan's monthly credits, once", async () => {
    const created = (await organizationOf(server)).createdAt
    await expect.poll(renewAt).toBe(addMonths(created, 1))
    await setCredits(server, 3)
    server.clock.advance(29 * day)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect((await organizationOf(server)).creditsRemaining).toBe(3)
    server.clock.advance(2 * day)
    await expect.poll(async () => (await organizationOf(server)).creditsRemaining).toBe(10_000)
    expect((await organizationOf(server)).creditsUsed).toBe(0)
    expect(await renewAt()).toBe(addMonths(created, 2))
    await setCredits(server, 5)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect((await organizationOf(server)).creditsRemaining).toBe(5)
  })

  it("a plan change takes effect at the next renewal", async () => {
    await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization("default", { plan: "creator", credits: 7 })))
    expect((await organizationOf(server)).creditsRemaining).toBe(7)
    server.clock.advance(31 * day)
    await expect.poll(async () => (await organizationOf(server)).creditsRemaining).toBe(1_000)
  })
})
