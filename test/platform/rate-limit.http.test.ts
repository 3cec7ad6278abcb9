/**
 * 120 requests per minute per key, in an exact sliding 60-second window, driven by the server's
 * hand-moved clock (no sleeping). Over the limit: 429 `rate_limited` with `Retry-After` seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, organizationWithPersonalKey, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestResponse, type TestServer } from "../support/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

let keys = 0
const freshKey = () => server.createKey({ name: `rate ${++keys}`, scopes: ["agents:read", "knowledge:read"] })

/** Sends `n` requests at once (the clock does not move while they run) and returns the statuses. */
const burst = async (key: string, n: number, path = "/agents"): Promise<Array<number>> =>
  (await Promise.all(Array.from({ length: n }, () => server.request("GET", path, { key })))).map((r) => r.status)

const allOk = (statuses: Array<number>) => expect(statuses.filter((s) => s !== 200)).toEqual([])

/** Asserts a 429 with the envelope and returns its `Retry-After` in seconds. */
const expectLimited = (response: TestResponse): number => {
  expectError(response, 429, "rate_limited")
  const retryAfter = response.headers.get("retry-after")
  expect(retryAfter).toMatch(/^[1-9][0-9]*$/)
  const seconds = Number(retryAfter)
  expect(seconds).toBeGreaterThanOrEqual(1)
  expect(seconds).toBeLessThanOrEqual(60)
  return seconds
}

describe("the per-key limit", () => {
  it("lets 120 requests through and refuses the 121st with 429, Retry-After and the envelope", async () => {
    const key = await freshKey()
    allOk(await burst(key, 120))
    const refused = await server.request("GET", "/agents", { key })
    expect(expectLimited(refused)).toBe(60)
  })

  it("opens again exactly when Retry-After says, not a millisecond earlier", async () => {
    const key = await freshKey()
    allOk(await burst(key, 120))
    const retryAfter = expectLimited(await server.request("GET", "/agents", { key }))
    server.clock.advance(retryAfter * 1000 - 1)
    expect(expectLimited(await server.request("GET", "/agents", { key }))).toBe(1)
    server.clock.advance(1)
    expect((await server.request("GET", "/agents", { key })).status).toBe(200)
  })

  it("refused requests do not count: hammering while limited does not push the reopening back", async () => {
    const key = await freshKey()
    allOk(await burst(key, 120))
    server.clock.advance(30_000)
    const hammer = await burst(key, 50)
    expect(hammer.every((s) => s === 429)).toBe(true)
    server.clock.advance(30_000)
    allOk(await burst(key, 120))
  })

  it("counts every authenticated request, whatever the endpoint or the outcome", async () => {
    const key = await freshKey()
    allOk(await burst(key, 40, "/agents"))
    allOk(await burst(key, 40, "/knowledgebases"))
    const invalid = await burst(key, 20, "/knowledgebases?limit=0")
    expect(invalid.every((s) => s === 400)).toBe(true)
    const missing = await burst(key, 20, `/knowledgebases/${unknownId()}`)
    expect(missing.every((s) => s === 404)).toBe(true)
    expectLimited(await server.request("GET", "/knowledgebases", { key }))
  })

  it("is counted after the plan check: a key of a trial organization is refused, never limited", async () => {
    const key = await organizationWithPersonalKey(server, "trial-rate", "trial")
    const statuses = await burst(key, 130)
    expect(statuses.every((s) => s === 403)).toBe(true)
    expectError(await server.request("GET", "/agents", { key }), 403, "api_disabled")
  })
})

describe("sliding, not fixed, window", () => {
  it("frees exactly the requests that left the window", async () => {
    const key = await freshKey()
    allOk(await burst(key, 60))
    server.clock.advance(30_000)
    allOk(await burst(key, 60))
    expect(expectLimited(await server.request("GET", "/agents", { key }))).toBe(30)

    server.clock.advance(30_000) // the first 60 leave the window; the second 60 are still in it
    allOk(await burst(key, 60))
    expect(expectLimited(await server.request("GET", "/agents", { key }))).toBe(30)
  })

  it("does not reset at a minute boundary", async () => {
    const key = await freshKey()
    const toNextMinute = 60_000 - (server.clock.now() % 60_000)
    server.clock.advance(toNextMinute - 1_000) // one second before the minute turns
    allOk(await burst(key, 120))
    server.clock.advance(2_000) // one second into the next minute
    expect(expectLimited(await server.request("GET", "/agents", { key }))).toBe(58)
    server.clock.advance(58_000)
    expect((await server.request("GET", "/agents", { key })).status).toBe(200)
  })
})

describe("limits are per key", () => {
  it("another key of the same organization, and keys of other organizations, are unaffected", async () => {
    const limited = await freshKey()
    allOk(await burst(limited, 120))
    expectLimited(await server.request("GET", "/agents", { key: limited }))

    allOk(await burst(await freshKey(), 120))
    const otherOrg = await server.createOrganization("elsewhere", "pro")
    allOk(await burst(otherOrg, 120))

    expectLimited(await server.request("GET", "/agents", { key: limited }))
  })

  it("a member's personal key has its own budget beside the organization's keys", async () => {
    const orgKey = await freshKey()
    allOk(await burst(orgKey, 120))
    await server.addMember("budget@example.com", "viewer")
    const personal = await server.createKey({ name: "own budget", scopes: "all", personalFor: "budget@example.com" })
    allOk(await burst(personal, 120))
    expectLimited(await server.request("GET", "/agents", { key: personal }))
  })

  it("requests with no key or an unknown key are not charged to anyone", async () => {
    const key = await freshKey()
    const anonymous = await Promise.all(Array.from({ length: 130 }, () => server.request("GET", "/agents", { key: null })))
    expect(anonymous.every((r) => r.status === 401)).toBe(true)
    allOk(await burst(key, 120))
  })
})
