/**
 * Authentication and the checks that follow it: every 401 and 403 path of the contract with its
 * exact code, revocation and member changes taking effect on the very next call, plan gating,
 * and the key's last-used time.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import {
  countKnowledgebases,
  createKeyRecord,
  expectError,
  organizationWithPersonalKey,
  personalKey,
  setPlan
} from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

const accounts = <A, E>(f: (a: AccountsService) => Effect.Effect<A, E>) => server.admin(Effect.flatMap(AccountsService, f))

describe("401 unauthorized: missing or malformed Authorization header", () => {
  const cases: ReadonlyArray<readonly [string, (key: string) => string | null]> = [
    ["no header at all", () => null],
    ["an empty header", () => ""],
    ["the scheme without a token", () => "Bearer"],
    ["another scheme", (key) => `Basic ${Buffer.from(`${key}:`).toString("base64")}`],
    ["a token without a scheme", (key) => key],
    ["two tokens", (key) => `Bearer ${key} ${key}`]
  ]

  it.each(cases)("%s → 401 unauthorized", async (_name, header) => {
    const value = header(server.key)
    const response = await server.request("GET", "/knowledgebases", {
      key: null,
      ...(value === null ? {} : { headers: { authorization: value } })
    })
    expectError(response, 401, "unauthorized")
  })

  it("takes the scheme name in any case (RFC 7235)", async () => {
    const response = await server.request("GET", "/knowledgebases", {
      key: null,
      headers: { authorization: `bearer ${server.key}` }
    })
    expect(response.status).toBe(200)
  })

  it("refuses a write before looking at it, and writes nothing", async () => {
    const before = await countKnowledgebases(server)
    const response = await server.request("POST", "/knowledgebases", { key: null, body: { name: "Anonymous" } })
    expectError(response, 401, "unauthorized")
    const malformed = await server.request("POST", "/knowledgebases", { key: null, body: "{not json" })
    expectError(malformed, 401, "unauthorized")
    expect(await countKnowledgebases(server)).toBe(before)
  })
})

describe("401 invalid_api_key: the token matches no key", () => {
  it.each([
    ["a garbage token", "garbage"],
    ["a well-formed organization key that was never issued", `svco_${"A".repeat(40)}`],
    ["a well-formed personal key that was never issued", `svcp_${"z".repeat(40)}`]
  ])("%s", async (_name, token) => {
    expectError(await server.request("GET", "/knowledgebases", { key: token }), 401, "invalid_api_key")
  })

  it("a real key with one character changed", async () => {
    const last = server.key.at(-1) === "A" ? "B" : "A"
    const altered = `${server.key.slice(0, -1)}${last}`
    expectError(await server.request("GET", "/agents", { key: altered }), 401, "invalid_api_key")
  })

  it("a key cut short or lengthened", async () => {
    expectError(await server.request("GET", "/agents", { key: server.key.slice(0, -1) }), 401, "invalid_api_key")
    expectError(await server.request("GET", "/agents", { key: `${server.key}x` }), 401, "invalid_api_key")
  })
})

describe("401 api_key_revoked", () => {
  it("a revoked key fails on the very next request, on every endpoint", async () => {
    const { key, secret } = await createKeyRecord(server, { name: "to revoke", scopes: "all" })
    expect((await server.request("GET", "/knowledgebases", { key: secret })).status).toBe(200)
    await accounts((a) => a.revokeKey("default", key.id))
    expectError(await server.request("GET", "/knowledgebases", { key: secret }), 401, "api_key_revoked")
    expectError(await server.request("GET", "/agents", { key: secret }), 401, "api_key_revoked")
    const before = await countKnowledgebases(server)
    expectError(
      await server.request("POST", "/knowledgebases", { key: secret, body: { name: "After revocation" } }),
      401,
      "api_key_revoked"
    )
    expect(await countKnowledgebases(server)).toBe(before)
  })

  it("revoking one key leaves the others working", async () => {
    const a = await createKeyRecord(server, { name: "a", scopes: ["agents:read"] })
    const b = await createKeyRecord(server, { name: "b", scopes: ["agents:read"] })
    await accounts((x) => x.revokeKey("default", a.key.id))
    expectError(await server.request("GET", "/agents", { key: a.secret }), 401, "api_key_revoked")
    expect((await server.request("GET", "/agents", { key: b.secret })).status).toBe(200)
  })

  it("a personal key whose member was removed → api_key_revoked, even if the email joins again", async () => {
    const secret = await personalKey(server, { email: "leaver@example.com", role: "member" })
    expect((await server.request("GET", "/knowledgebases", { key: secret })).status).toBe(200)
    await accounts((a) => a.removeMember("default", "leaver@example.com"))
    expectError(await server.request("GET", "/knowledgebases", { key: secret }), 401, "api_key_revoked")
    await server.addMember("leaver@example.com", "admin")
    expectError(await server.request("GET", "/knowledgebases", { key: secret }), 401, "api_key_revoked")
  })

  it("authentication comes before the plan check: a revoked key of a trial organization is 401", async () => {
    await organizationWithPersonalKey(server, "trial-revoked", "trial")
    const { key, secret } = await createKeyRecord(server, {
      org: "trial-revoked",
      name: "second",
      scopes: "all",
      personalFor: "owner@trial-revoked.test"
    })
    await accounts((a) => a.revokeKey("trial-revoked", key.id))
    expectError(await server.request("GET", "/knowledgebases", { key: secret }), 401, "api_key_revoked")
  })
})

describe("403 insufficient_scope through a member's current role", () => {
  it("a viewer's key with knowledge:write cannot create; after promotion it can; after demotion it cannot", async () => {
    const secret = await personalKey(server, {
      email: "viewer@example.com",
      role: "viewer",
      scopes: ["knowledge:read", "knowledge:write"]
    })
    const before = await countKnowledgebases(server)
    const refused = await server.request("POST", "/knowledgebases", { key: secret, body: { name: "By a viewer" } })
    expect(expectError(refused, 403, "insufficient_scope")).toContain("knowledge:write")
    expect(await countKnowledgebases(server)).toBe(before)
    expect((await server.request("GET", "/knowledgebases", { key: secret })).status).toBe(200)

    await accounts((a) => a.setMemberRole("default", "viewer@example.com", "member"))
    const created = await server.request("POST", "/knowledgebases", { key: secret, body: { name: "By a member" } })
    expect(created.status).toBe(201)
    expect(await countKnowledgebases(server)).toBe(before + 1)

    await accounts((a) => a.setMemberRole("default", "viewer@example.com", "viewer"))
    expectError(
      await server.request("POST", "/knowledgebases", { key: secret, body: { name: "Demoted" } }),
      403,
      "insufficient_scope"
    )
    expect(await countKnowledgebases(server)).toBe(before + 1)
  })

  it("an all-scopes personal key is capped by the role and picks up what a promotion allows", async () => {
    const secret = await personalKey(server, { email: "grows@example.com", role: "viewer", scopes: "all" })
    expect((await server.request("GET", "/agents", { key: secret })).status).toBe(200)
    expectError(
      await server.request("POST", "/knowledgebases", { key: secret, body: { name: "Too early" } }),
      403,
      "insufficient_scope"
    )
    await accounts((a) => a.setMemberRole("default", "grows@example.com", "member"))
    expect((await server.request("POST", "/knowledgebases", { key: secret, body: { name: "Now allowed" } })).status).toBe(201)
  })

  it("a personal key never exceeds its own scope list, whatever the role", async () => {
    const secret = await personalKey(server, { email: "narrow-admin@example.com", role: "admin", scopes: ["knowledge:read"] })
    expect((await server.request("GET", "/knowledgebases", { key: secret })).status).toBe(200)
    expectError(
      await server.request("POST", "/knowledgebases", { key: secret, body: { name: "Nope" } }),
      403,
      "insufficient_scope"
    )
    expectError(await server.request("GET", "/agents", { key: secret }), 403, "insufficient_scope")
  })
})

describe("403 api_disabled: the External API is on the Pro and Agency plans only", () => {
  it.each(["trial", "creator", "lifetime"] as const)("an organization on %s gets api_disabled everywhere and nothing is written", async (plan) => {
    const slug = `on-${plan}`
    const secret = await organizationWithPersonalKey(server, slug, plan)
    expectError(await server.request("GET", "/knowledgebases", { key: secret }), 403, "api_disabled")
    expectError(await server.request("GET", "/agents", { key: secret }), 403, "api_disabled")
    expectError(
      await server.request("POST", "/knowledgebases", { key: secret, body: { name: "Gated" } }),
      403,
      "api_disabled"
    )
    expect(await countKnowledgebases(server, slug)).toBe(0)
  })

  it("the plan is checked before the scope", async () => {
    const secret = await organizationWithPersonalKey(server, "creator-narrow", "creator", { scopes: ["agents:read"] })
    expectError(await server.request("GET", "/knowledgebases", { key: secret }), 403, "api_disabled")
  })

  it("a plan change applies on the next call, both ways", async () => {
    const secret = await server.createOrganization("downgraded", "pro")
    expect((await server.request("GET", "/knowledgebases", { key: secret })).status).toBe(200)
    await setPlan(server, "downgraded", "creator")
    expectError(await server.request("GET", "/knowledgebases", { key: secret }), 403, "api_disabled")
    await setPlan(server, "downgraded", "agency")
    expect((await server.request("GET", "/knowledgebases", { key: secret })).status).toBe(200)
  })

  it("an agency organization's keys work", async () => {
    const secret = await server.createOrganization("agency-org", "agency")
    expect((await server.request("POST", "/knowledgebases", { key: secret, body: { name: "Agency KB" } })).status).toBe(201)
  })
})

describe("last used", () => {
  const lastUsed = async (keyId: string) => {
    const keys = await accounts((a) => a.listKeys("default"))
    return keys.find((k) => k.id === keyId)?.lastUsedAt
  }

  it("is empty until the key is used, then records the time of use", async () => {
    const { key, secret } = await createKeyRecord(server, { name: "tracked", scopes: ["agents:read"] })
    expect(await lastUsed(key.id)).toBeNull()
    const firstUse = new Date(server.clock.now()).toISOString()
    expect((await server.request("GET", "/agents", { key: secret })).status).toBe(200)
    expect(await lastUsed(key.id)).toBe(firstUse)

    server.clock.advance(5 * 60_000)
    const laterUse = new Date(server.clock.now()).toISOString()
    expect((await server.request("GET", "/agents", { key: secret })).status).toBe(200)
    expect(await lastUsed(key.id)).toBe(laterUse)
  })

  it("is not touched by requests with another key", async () => {
    const { key } = await createKeyRecord(server, { name: "idle", scopes: ["agents:read"] })
    expect((await server.request("GET", "/agents")).status).toBe(200)
    expect(await lastUsed(key.id)).toBeNull()
  })
})
