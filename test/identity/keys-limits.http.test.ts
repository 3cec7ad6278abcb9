/**
 * Key counts (spec: Authentication 4, Limits): at most 20 active organization keys per organization
 * and 5 active personal keys per member. Keys are made by the CLI (the admin handle here), never
 * through the API; every key made works over HTTP, a refused attempt writes nothing, and revoking a
 * key frees its slot. Organization keys exist only on the Pro and Agency plans.
 */
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AdminServices } from "../../server/admin.js"
import { keyLimits, type Plan } from "../../server/identity/domain.js"
import { AccountsService, type CreatedKey, type KeyRequest } from "../../server/identity/service.js"
import { createKeyRecord, expectError, setPlan } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

const accounts = <A, E>(f: (a: AccountsService) => Effect.Effect<A, E, AdminServices>) =>
  server.admin(Effect.flatMap(AccountsService, f))

/** The failure of a `createKey` that is expected to fail (the test fails if it succeeds). */
const refusedKey = async (org: string, request: KeyRequest) => {
  const result = await accounts((a) => Effect.either(a.createKey(org, request)))
  if (Either.isRight(result)) throw new Error(`createKey '${request.name}' in '${org}' should have been refused`)
  return result.left
}

const listKeys = (org: string) => accounts((a) => a.listKeys(org))
const activeKeys = async (org: string, kind: "organization" | "personal") =>
  (await listKeys(org)).filter((key) => key.kind === kind && key.revokedAt === null)

/** An organization with no keys at all. */
const organization = async (slug: string, plan: Plan = "pro") => {
  await accounts((a) => a.createOrganization({ slug, plan }))
}

/** Asserts a secret authenticates over HTTP. */
const expectWorks = async (secret: string) => {
  const response = await server.request("GET", "/knowledgebases", { key: secret })
  expect(response.status).toBe(200)
}

/** Makes `count` organization keys; returns their records and secrets. */
const makeOrganizationKeys = async (org: string, count: number, prefix = "key") => {
  const made: Array<CreatedKey> = []
  for (let i = 0; i < count; i++) made.push(await createKeyRecord(server, { org, name: `${prefix} ${i}`, scopes: ["knowledge:read"] }))
  return made
}

describe("organization keys: at most 20 active per organization", () => {
  it("the limit is 20", () => {
    expect(keyLimits.organization).toBe(20)
  })

  it("bootstrap key + 19 more = 20 active, each works; the 21st is refused with invalid_request naming the limit, and writes nothing", async () => {
    const before = await listKeys("default")
    expect(before.map((k) => k.name)).toEqual(["bootstrap"])
    await expectWorks(server.key)

    const made = await makeOrganizationKeys("default", 19)
    expect(await activeKeys("default", "organization")).toHaveLength(20)
    for (const { secret } of made) await expectWorks(secret)

    const error = await refusedKey("default", { name: "one too many", scopes: "all" })
    expect(error._tag).toBe("InvalidRequest")
    expect(error.code).toBe("invalid_request")
    expect(error.message).toContain("20")
    expect(error.message).toMatch(/organization key/i)

    const after = await listKeys("default")
    expect(after).toHaveLength(20)
    expect(after.map((k) => k.name)).not.toContain("one too many")
    expect(after.map((k) => k.id).sort()).toEqual([...before.map((k) => k.id), ...made.map((m) => m.key.id)].sort())

    // Every key still works after the refusal, the first and the last included.
    await expectWorks(server.key)
    await expectWorks(made.at(-1)!.secret)
  })

  it("revoking one frees exactly one slot; revoked keys do not count", async () => {
    await organization("org-revoke")
    const made = await makeOrganizationKeys("org-revoke", 20)
    expect((await refusedKey("org-revoke", { name: "21st", scopes: "all" })).code).toBe("invalid_request")

    const revoked = made[7]!
    await accounts((a) => a.revokeKey("org-revoke", revoked.key.id))
    // Revoking again is idempotent and frees nothing more.
    await accounts((a) => a.revokeKey("org-revoke", revoked.key.id))
    expect(await activeKeys("org-revoke", "organization")).toHaveLength(19)

    const replacement = await createKeyRecord(server, { org: "org-revoke", name: "replacement", scopes: ["knowledge:read"] })
    await expectWorks(replacement.secret)
    expectError(await server.request("GET", "/knowledgebases", { key: revoked.secret }), 401, "api_key_revoked")

    // 20 active again (21 stored, one revoked): the next one is refused.
    const error = await refusedKey("org-revoke", { name: "22nd", scopes: "all" })
    expect(error.code).toBe("invalid_request")
    expect(error.message).toContain("20")
    const keys = await listKeys("org-revoke")
    expect(keys).toHaveLength(21)
    expect(keys.filter((k) => k.revokedAt !== null).map((k) => k.id)).toEqual([revoked.key.id])

    // Revoke several: that many slots open, no more.
    for (const { key } of made.slice(0, 3)) await accounts((a) => a.revokeKey("org-revoke", key.id))
    const refill = await makeOrganizationKeys("org-revoke", 3, "refill")
    for (const { secret } of refill) await expectWorks(secret)
    expect((await refusedKey("org-revoke", { name: "over again", scopes: "all" })).code).toBe("invalid_request")
    expect(await activeKeys("org-revoke", "organization")).toHaveLength(20)
  })

  it("the limit is per organization: a full organization does not hold back another", async () => {
    await organization("org-full-a")
    await organization("org-full-b", "agency")
    await makeOrganizationKeys("org-full-a", 20)
    expect((await refusedKey("org-full-a", { name: "over", scopes: "all" })).code).toBe("invalid_request")
    const other = await makeOrganizationKeys("org-full-b", 20)
    await expectWorks(other.at(-1)!.secret)
    expect((await refusedKey("org-full-b", { name: "over", scopes: "all" })).code).toBe("invalid_request")
  })

  it("personal keys do not count toward the organization limit, nor organization keys toward a member's", async () => {
    await organization("org-mixed")
    await server.addMember("mixed@example.com", "admin", "org-mixed")
    const personal: Array<CreatedKey> = []
    for (let i = 0; i < keyLimits.personalPerMember; i++) {
      personal.push(await createKeyRecord(server, { org: "org-mixed", name: `p ${i}`, scopes: "all", personalFor: "mixed@example.com" }))
    }
    const organizationKeys = await makeOrganizationKeys("org-mixed", 20)
    for (const { secret } of [...personal, ...organizationKeys]) await expectWorks(secret)
    expect(await activeKeys("org-mixed", "organization")).toHaveLength(20)
    expect(await activeKeys("org-mixed", "personal")).toHaveLength(5)
    expect((await refusedKey("org-mixed", { name: "org over", scopes: "all" })).message).toContain("20")
  })

  it("a refused attempt leaves no usable key: listed keys all authenticate, nothing else was stored", async () => {
    await organization("org-nothing")
    const made = await makeOrganizationKeys("org-nothing", 20)
    const before = await listKeys("org-nothing")
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await refusedKey("org-nothing", { name: `attempt ${attempt}`, scopes: "all" })).code).toBe("invalid_request")
    }
    expect(await listKeys("org-nothing")).toEqual(before)
    expect(new Set(before.map((k) => k.prefix)).size).toBe(20)
    for (const { secret } of made) await expectWorks(secret)
  })
})

describe("organization keys exist only on Pro and Agency", () => {
  it.each(["trial", "creator", "lifetime"] as const)("%s: an organization key is refused with invalid_request, nothing written", async (plan) => {
    const slug = `org-plan-${plan}`
    await organization(slug, "pro")
    const earlier = await createKeyRecord(server, { org: slug, name: "made on pro", scopes: ["knowledge:read"] })
    await setPlan(server, slug, plan)
    const before = await listKeys(slug)

    const error = await refusedKey(slug, { name: "on a small plan", scopes: ["knowledge:read"] })
    expect(error._tag).toBe("InvalidRequest")
    expect(error.code).toBe("invalid_request")
    expect(error.message).toContain(plan)
    expect(await listKeys(slug)).toEqual(before)

    // A key made before the downgrade is refused by the API on this plan.
    expectError(await server.request("GET", "/knowledgebases", { key: earlier.secret }), 403, "api_disabled")

    // Personal keys are still made on these plans.
    await server.addMember(`owner@${slug}.test`, "admin", slug)
    const personal = await createKeyRecord(server, { org: slug, name: "personal", scopes: "all", personalFor: `owner@${slug}.test` })
    expect(personal.key.kind).toBe("personal")

    // Back on Pro, organization keys can be made again and work.
    await setPlan(server, slug, "pro")
    const again = await createKeyRecord(server, { org: slug, name: "back on pro", scopes: ["knowledge:read"] })
    await expectWorks(again.secret)
    await expectWorks(earlier.secret)
  })

  it("an organization created on trial gets no organization key", async () => {
    await organization("org-born-trial", "trial")
    const error = await refusedKey("org-born-trial", { name: "nope", scopes: "all" })
    expect(error.code).toBe("invalid_request")
    expect(await listKeys("org-born-trial")).toEqual([])
  })
})

describe("personal keys: at most 5 active per member", () => {
  it("the limit is 5", () => {
    expect(keyLimits.personalPerMember).toBe(5)
  })

  it("5 keys each work; the 6th is refused with invalid_request naming the limit, writes nothing; others are unaffected; revoking frees a slot", async () => {
    await organization("org-personal")
    await server.addMember("alice@example.com", "member", "org-personal")
    await server.addMember("bob@example.com", "viewer", "org-personal")
    const personal = (email: string, name: string) =>
      createKeyRecord(server, { org: "org-personal", name, scopes: ["knowledge:read"], personalFor: email })

    const alice: Array<CreatedKey> = []
    for (let i = 0; i < 5; i++) alice.push(await personal("alice@example.com", `alice ${i}`))
    for (const { secret } of alice) await expectWorks(secret)
    const before = await listKeys("org-personal")

    const error = await refusedKey("org-personal", { name: "alice 6", scopes: "all", personalFor: "alice@example.com" })
    expect(error._tag).toBe("InvalidRequest")
    expect(error.code).toBe("invalid_request")
    expect(error.message).toContain("5")
    expect(error.message).toMatch(/personal key/i)
    expect(await listKeys("org-personal")).toEqual(before)

    // Another member is unaffected, up to their own limit.
    const bob: Array<CreatedKey> = []
    for (let i = 0; i < 5; i++) bob.push(await personal("bob@example.com", `bob ${i}`))
    for (const { secret } of bob) await expectWorks(secret)
    expect((await refusedKey("org-personal", { name: "bob 6", scopes: "all", personalFor: "bob@example.com" })).code).toBe(
      "invalid_request"
    )

    // Organization keys are unaffected by full members.
    await expectWorks((await createKeyRecord(server, { org: "org-personal", name: "org", scopes: ["knowledge:read"] })).secret)

    // Revoking one of Alice's frees one slot, for Alice only.
    await accounts((a) => a.revokeKey("org-personal", alice[2]!.key.id))
    expectError(await server.request("GET", "/knowledgebases", { key: alice[2]!.secret }), 401, "api_key_revoked")
    expect((await refusedKey("org-personal", { name: "bob again", scopes: "all", personalFor: "bob@example.com" })).code).toBe(
      "invalid_request"
    )
    const replacement = await personal("alice@example.com", "alice replacement")
    await expectWorks(replacement.secret)
    expect((await refusedKey("org-personal", { name: "alice 7", scopes: "all", personalFor: "alice@example.com" })).code).toBe(
      "invalid_request"
    )
  })

  it("personal keys are counted per member, also on a plan without organization keys", async () => {
    await organization("org-personal-trial", "trial")
    await server.addMember("carol@example.com", "admin", "org-personal-trial")
    for (let i = 0; i < 5; i++) {
      await createKeyRecord(server, { org: "org-personal-trial", name: `c ${i}`, scopes: "all", personalFor: "carol@example.com" })
    }
    const error = await refusedKey("org-personal-trial", { name: "c 5", scopes: "all", personalFor: "carol@example.com" })
    expect(error.code).toBe("invalid_request")
    expect(error.message).toContain("5")
  })

  it("the same email in another organization is another member with its own limit", async () => {
    await organization("org-dave-1")
    await organization("org-dave-2")
    for (const org of ["org-dave-1", "org-dave-2"]) {
      await server.addMember("dave@example.com", "member", org)
      for (let i = 0; i < 5; i++) {
        const made = await createKeyRecord(server, { org, name: `d ${i}`, scopes: ["knowledge:read"], personalFor: "dave@example.com" })
        await expectWorks(made.secret)
      }
    }
    for (const org of ["org-dave-1", "org-dave-2"]) {
      expect((await refusedKey(org, { name: "d 5", scopes: "all", personalFor: "dave@example.com" })).code).toBe("invalid_request")
    }
  })

  it("a member who left and rejoined starts with no active keys (their old keys stopped working)", async () => {
    await organization("org-rejoin")
    await server.addMember("erin@example.com", "member", "org-rejoin")
    const old: Array<CreatedKey> = []
    for (let i = 0; i < 5; i++) {
      old.push(await createKeyRecord(server, { org: "org-rejoin", name: `old ${i}`, scopes: ["knowledge:read"], personalFor: "erin@example.com" }))
    }
    await accounts((a) => a.removeMember("org-rejoin", "erin@example.com"))
    await server.addMember("erin@example.com", "member", "org-rejoin")
    const fresh: Array<CreatedKey> = []
    for (let i = 0; i < 5; i++) {
      fresh.push(await createKeyRecord(server, { org: "org-rejoin", name: `new ${i}`, scopes: ["knowledge:read"], personalFor: "erin@example.com" }))
    }
    for (const { secret } of fresh) await expectWorks(secret)
    for (const { secret } of old) expectError(await server.request("GET", "/knowledgebases", { key: secret }), 401, "api_key_revoked")
    expect((await refusedKey("org-rejoin", { name: "new 5", scopes: "all", personalFor: "erin@example.com" })).code).toBe(
      "invalid_request"
    )
  })
})
