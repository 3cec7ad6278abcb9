/**
 * Plan, gate and scope checks of `authorize` at unit level, over hand-built principals: the refusal
 * code (and its HTTP status) for each case, and the order plan → gate → scope. Then the real API
 * definition: every endpoint declares a scope, and the Apps, User groups and Portal admissions
 * endpoints carry their gates.
 */
import { describe, expect, it } from "vitest"
import { Api } from "../../server/api.js"
import {
  type ApiKey,
  type ApiScope,
  apiPlans,
  effectiveScopes,
  type Gate,
  type KeyKind,
  type Member,
  type Organization,
  type Plan,
  plans,
  type Role,
  scopes as allScopes,
  type StoredScopes
} from "../../server/identity/domain.js"
import { ApiDisabled, GroupsDisabled, InsufficientScope } from "../../server/platform/errors.js"
import { authorize } from "../../server/http/authentication.js"
import { statusOfTag } from "../../server/platform/request/error-catalog.js"
import { type EndpointPolicy, policyIndex } from "../../server/http/policy.js"

const createdAt = "2026-11-21T12:00:00.000Z"

const organization = (plan: Plan, gates: ReadonlyArray<Gate> = []): Organization => ({
  id: "00000000-0000-4000-8000-000000000001",
  slug: `org-${plan}`,
  name: `Org ${plan}`,
  plan,
  gates: new Set(gates),
  creditsRemaining: 1_000,
  creditsUsed: 0,
  createdAt
})

/** An organization key with `stored` scopes (fixed at creation). */
const organizationKey = (plan: Plan, gates: ReadonlyArray<Gate>, stored: StoredScopes) =>
  principal(organization(plan, gates), "organization", stored, null)

/** A personal key of a member with `role`. */
const personalKey = (plan: Plan, gates: ReadonlyArray<Gate>, stored: StoredScopes, role: Role) =>
  principal(organization(plan, gates), "personal", stored, role)

const principal = (org: Organization, kind: KeyKind, stored: StoredScopes, role: Role | null) => {
  const member: Member | null =
    role === null
      ? null
      : { id: "00000000-0000-4000-8000-000000000002", organizationId: org.id, email: "m@example.com", role, createdAt }
  const key: ApiKey = {
    id: "00000000-0000-4000-8000-000000000003",
    organizationId: org.id,
    kind,
    memberId: member?.id ?? null,
    name: "hand-made",
    prefix: kind === "organization" ? "svco_AAAAAAA" : "svcp_AAAAAAA",
    scopes: kind === "organization" && stored === "all" ? [...allScopes] : stored,
    createdAt,
    lastUsedAt: null,
    revokedAt: null
  }
  return { organization: org, key, member, scopes: effectiveScopes(kind, key.scopes, role) }
}

const policy = (scope: ApiScope, gate?: Gate): EndpointPolicy & { scope: ApiScope } => ({ scope, gate })

/** The refusal as the client sees it: code and HTTP status, or null. */
const outcome = (refusal: ReturnType<typeof authorize>) =>
  refusal === null ? null : { code: refusal.code, status: statusOfTag.get(refusal._tag) }

const noApiPlans = plans.filter((plan) => !apiPlans.includes(plan))

describe("authorize: gates", () => {
  it("the plans without the API are exactly trial, creator and lifetime", () => {
    expect([...noApiPlans].sort()).toEqual(["creator", "lifetime", "trial"])
  })

  it("gate groups off → 403 groups_disabled", () => {
    const refusal = authorize(organizationKey("pro", ["apps", "mcp"], "all"), policy("end_users:read", "groups"))
    expect(refusal).toBeInstanceOf(GroupsDisabled)
    expect(outcome(refusal)).toEqual({ code: "groups_disabled", status: 403 })
    expect(refusal!.message.length).toBeGreaterThan(0)
  })

  it("gate apps off → 403 api_disabled naming Apps", () => {
    const refusal = authorize(organizationKey("agency", ["groups", "mcp"], "all"), policy("apps:read", "apps"))
    expect(refusal).toBeInstanceOf(ApiDisabled)
    expect(outcome(refusal)).toEqual({ code: "api_disabled", status: 403 })
    expect(refusal!.message).toMatch(/apps/i)
  })

  it("a gate that is on lets the call through", () => {
    expect(authorize(organizationKey("pro", ["groups"], "all"), policy("end_users:write", "groups"))).toBeNull()
    expect(authorize(organizationKey("agency", ["apps"], "all"), policy("apps:execute", "apps"))).toBeNull()
    expect(authorize(organizationKey("pro", ["apps", "groups"], ["apps:read"]), policy("apps:read", "apps"))).toBeNull()
  })

  it("one gate does not stand in for another", () => {
    expect(outcome(authorize(organizationKey("pro", ["apps"], "all"), policy("end_users:read", "groups")))).toEqual({
      code: "groups_disabled",
      status: 403
    })
    expect(outcome(authorize(organizationKey("pro", ["groups", "mcp", "review"], "all"), policy("apps:read", "apps")))).toEqual({
      code: "api_disabled",
      status: 403
    })
  })

  it("an ungated endpoint ignores the organization's gates", () => {
    expect(authorize(organizationKey("pro", [], ["knowledge:read"]), policy("knowledge:read"))).toBeNull()
  })

  it("gate on, scope missing → 403 insufficient_scope naming the scope", () => {
    const groups = authorize(organizationKey("pro", ["groups"], ["end_users:read"]), policy("end_users:write", "groups"))
    expect(groups).toBeInstanceOf(InsufficientScope)
    expect(outcome(groups)).toEqual({ code: "insufficient_scope", status: 403 })
    expect(groups!.message).toContain("end_users:write")
    const apps = authorize(organizationKey("pro", ["apps"], ["agents:read"]), policy("apps:read", "apps"))
    expect(outcome(apps)).toEqual({ code: "insufficient_scope", status: 403 })
    expect(apps!.message).toContain("apps:read")
  })

  it("a personal key's scopes follow its member's role behind an open gate", () => {
    // end_users:* needs Admin: a member's all-scopes personal key lacks it.
    const asMember = authorize(personalKey("pro", ["groups"], "all", "member"), policy("end_users:read", "groups"))
    expect(outcome(asMember)).toEqual({ code: "insufficient_scope", status: 403 })
    expect(asMember!.message).toContain("end_users:read")
    expect(authorize(personalKey("pro", ["groups"], "all", "admin"), policy("end_users:read", "groups"))).toBeNull()
    // apps:write needs Member: a viewer is refused, a member passes.
    expect(outcome(authorize(personalKey("agency", ["apps"], "all", "viewer"), policy("apps:write", "apps")))).toEqual({
      code: "insufficient_scope",
      status: 403
    })
    expect(authorize(personalKey("agency", ["apps"], "all", "member"), policy("apps:write", "apps"))).toBeNull()
  })
})

describe("authorize: plans without the API", () => {
  describe.each(noApiPlans)("%s", (plan) => {
    it("→ 403 api_disabled naming the plan, even with every gate and scope", () => {
      const refusal = authorize(organizationKey(plan, ["apps", "groups", "mcp"], "all"), policy("knowledge:read"))
      expect(refusal).toBeInstanceOf(ApiDisabled)
      expect(outcome(refusal)).toEqual({ code: "api_disabled", status: 403 })
      expect(refusal!.message).toContain(plan)
    })

    it("the plan is checked before the gate: gate groups off still gives api_disabled", () => {
      const refusal = authorize(organizationKey(plan, [], "all"), policy("end_users:read", "groups"))
      expect(outcome(refusal)).toEqual({ code: "api_disabled", status: 403 })
      expect(refusal!.message).toContain(plan)
    })

    it("the plan is checked before the gate: gate apps off gives the plan's refusal, not the gate's", () => {
      const refusal = authorize(organizationKey(plan, [], "all"), policy("apps:read", "apps"))
      expect(outcome(refusal)).toEqual({ code: "api_disabled", status: 403 })
      expect(refusal!.message).toContain(plan)
    })

    it("the plan is checked before the scope", () => {
      const refusal = authorize(organizationKey(plan, ["groups"], ["agents:read"]), policy("end_users:write", "groups"))
      expect(outcome(refusal)).toEqual({ code: "api_disabled", status: 403 })
      const personal = authorize(personalKey(plan, [], ["knowledge:read"], "viewer"), policy("knowledge:write"))
      expect(outcome(personal)).toEqual({ code: "api_disabled", status: 403 })
    })
  })
})

describe("authorize: order plan → gate → scope over every combination", () => {
  const gated: ReadonlyArray<readonly [Gate, ApiScope, string]> = [
    ["groups", "end_users:write", "groups_disabled"],
    ["apps", "apps:execute", "api_disabled"]
  ]
  const cases = plans.flatMap((plan) =>
    gated.flatMap(([gate, scope, gateCode]) =>
      [true, false].flatMap((gateOn) =>
        [true, false].map((hasScope) => {
          const expected = !apiPlans.includes(plan)
            ? "api_disabled"
            : !gateOn
              ? gateCode
              : !hasScope
                ? "insufficient_scope"
                : null
          return { plan, gate, scope, gateOn, hasScope, expected }
        })
      )
    )
  )

  it.each(cases)(
    "$plan, gate $gate on=$gateOn, scope $scope held=$hasScope → $expected",
    ({ plan, gate, scope, gateOn, hasScope, expected }) => {
      const held: StoredScopes = hasScope ? [scope] : allScopes.filter((s) => s !== scope)
      const refusal = authorize(organizationKey(plan, gateOn ? [gate] : [], held), policy(scope, gate))
      expect(outcome(refusal)).toEqual(expected === null ? null : { code: expected, status: 403 })
    }
  )
})

describe("the API definition's policies", () => {
  const index = policyIndex(Api)
  const entries = [...index.entries()].map(([route, policy]) => {
    const [method, path] = route.split(" ") as [string, string]
    return { route, method, path, ...policy }
  })
  const isApps = (path: string) => path === "/api/v1/apps" || path.startsWith("/api/v1/apps/")
  const isUserGroups = (path: string) => path === "/api/v1/user-groups" || path.startsWith("/api/v1/user-groups/")
  const isAdmissions = (path: string) => /^\/api\/v1\/portals\/:[^/]+\/admissions(\/|$)/.test(path)

  it("has endpoints, all under /api/v1", () => {
    expect(entries.length).toBeGreaterThan(0)
    for (const { route, path } of entries) expect(path, route).toMatch(/^\/api\/v1\//)
  })

  it("every endpoint declares a known scope (or known alternatives)", () => {
    for (const { route, scope } of entries) {
      expect(scope, route).toBeDefined()
      const alternatives: ReadonlyArray<unknown> = Array.isArray(scope) ? scope : [scope]
      expect(alternatives.length, route).toBeGreaterThan(0)
      for (const one of alternatives) expect(allScopes, route).toContain(one)
    }
  })

  it("GET /api/v1/apps exists, needs apps:read and gate apps", () => {
    expect(index.get("GET /api/v1/apps")).toEqual({ scope: "apps:read", gate: "apps" })
  })

  it("every Apps endpoint has gate apps and an apps:* scope", () => {
    const apps = entries.filter((e) => isApps(e.path))
    expect(apps.length).toBeGreaterThan(0)
    for (const { route, gate, scope } of apps) {
      expect(gate, route).toBe("apps")
      expect(scope, route).toMatch(/^apps:/)
    }
  })

  it("every User groups and Portal admissions endpoint has gate groups and an end_users:* scope", () => {
    for (const { route, gate, scope } of entries.filter((e) => isUserGroups(e.path) || isAdmissions(e.path))) {
      expect(gate, route).toBe("groups")
      expect(scope, route).toMatch(/^end_users:/)
    }
  })

  it("no other endpoint is gated", () => {
    for (const { route, path, gate } of entries) {
      if (isApps(path) || isUserGroups(path) || isAdmissions(path)) continue
      expect(gate, route).toBeUndefined()
    }
  })
})
