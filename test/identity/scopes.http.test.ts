/**
 * Scopes are enforced per endpoint, family by family (knowledge, agents), and the enforcement is
 * fail-closed: every operation of the OpenAPI description declares its scope, and the server
 * enforces exactly the declared one.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { scopes as allScopes } from "../../server/identity/domain.js"
import { AccountsService } from "../../server/identity/service.js"
import { countKnowledgebases, createKeyRecord, expectError, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
let existingKb: string
beforeAll(async () => {
  server = await startTestServer()
  const created = await server.request("POST", "/knowledgebases", { body: { name: "Existing" } })
  expect(created.status).toBe(201)
  existingKb = created.body.knowledgebase.id
})
afterAll(() => server.stop())

const keyWith = (...scopes: Array<string>) => server.createKey({ name: `${scopes.length} scope(s)`, scopes })

describe("the agents family", () => {
  it("agents:read lists Agents but cannot read or write Knowledgebases", async () => {
    const key = await keyWith("agents:read")
    const agents = await server.request("GET", "/agents", { key })
    expect(agents.status).toBe(200)
    expect(agents.body).toEqual({ agents: [], nextCursor: null })

    const list = await server.request("GET", "/knowledgebases", { key })
    expect(expectError(list, 403, "insufficient_scope")).toContain("knowledge:read")
    expectError(await server.request("GET", `/knowledgebases/${existingKb}`, { key }), 403, "insufficient_scope")

    const before = await countKnowledgebases(server)
    const create = await server.request("POST", "/knowledgebases", { key, body: { name: "Not allowed" } })
    expect(expectError(create, 403, "insufficient_scope")).toContain("knowledge:write")
    expect(await countKnowledgebases(server)).toBe(before)
  })

  it("agents:execute and agents:write do not grant agents:read", async () => {
    const key = await keyWith("agents:execute", "agents:write")
    expect(expectError(await server.request("GET", "/agents", { key }), 403, "insufficient_scope")).toContain("agents:read")
  })
})

describe("the knowledge family", () => {
  it("knowledge:read lists and reads but cannot create, and cannot list Agents", async () => {
    const key = await keyWith("knowledge:read")
    const list = await server.request("GET", "/knowledgebases", { key })
    expect(list.status).toBe(200)
    expect(list.body.knowledgebases.map((kb: any) => kb.id)).toContain(existingKb)
    expect((await server.request("GET", `/knowledgebases/${existingKb}`, { key })).status).toBe(200)

    const before = await countKnowledgebases(server)
    const create = await server.request("POST", "/knowledgebases", {
      key,
      body: { name: "Read-only" },
      headers: { "idempotency-key": "read-only-attempt" }
    })
    expectError(create, 403, "insufficient_scope")
    expect(await countKnowledgebases(server)).toBe(before)

    expectError(await server.request("GET", "/agents", { key }), 403, "insufficient_scope")
  })

  it("knowledge:write creates, and is not knowledge:read (each endpoint has exactly one scope)", async () => {
    const key = await keyWith("knowledge:write")
    const created = await server.request("POST", "/knowledgebases", { key, body: { name: "Write-only" } })
    expect(created.status).toBe(201)
    expectError(await server.request("GET", "/knowledgebases", { key }), 403, "insufficient_scope")
    expectError(await server.request("GET", `/knowledgebases/${created.body.knowledgebase.id}`, { key }), 403, "insufficient_scope")
  })

  it("a refused request with an Idempotency-Key leaves the key unused", async () => {
    const readOnly = await keyWith("knowledge:read")
    const headers = { "idempotency-key": "first-refused-then-allowed" }
    expectError(
      await server.request("POST", "/knowledgebases", { key: readOnly, body: { name: "Later" }, headers }),
      403,
      "insufficient_scope"
    )
    const allowed = await server.request("POST", "/knowledgebases", { body: { name: "Later" }, headers })
    expect(allowed.status).toBe(201)
    expect(allowed.headers.get("idempotent-replayed")).toBeNull()
  })

  it("the scope is checked before the object is looked up: an unknown id is 403, not 404", async () => {
    const key = await keyWith("agents:read")
    expectError(await server.request("GET", `/knowledgebases/${unknownId()}`, { key }), 403, "insufficient_scope")
  })
})

describe("fail-closed: every operation declares its scope and the server enforces exactly it", () => {
  interface Operation {
    readonly method: string
    readonly path: string
    readonly operationId: string
    readonly scope: unknown
  }
  let operations: Array<Operation>
  beforeAll(async () => {
    const doc = await server.request("GET", "/openapi.json", { key: null })
    expect(doc.status).toBe(200)
    operations = []
    for (const [path, item] of Object.entries<Record<string, any>>(doc.body.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (!["get", "post", "put", "patch", "delete"].includes(method)) continue
        operations.push({ method: method.toUpperCase(), path, operationId: op.operationId, scope: op["x-required-scope"] })
      }
    }
  })

  /** The scopes admitting a key to an operation: its one scope, or the alternatives it lists. */
  const admitting = (op: Operation): Array<string> => [op.scope].flat() as Array<string>

  it("every operation declares `x-required-scope`, a known scope or a list of known alternatives", () => {
    expect(operations.length).toBeGreaterThan(0)
    for (const op of operations) {
      const scopes = admitting(op)
      expect({ op: op.operationId, known: scopes.length > 0 && scopes.every((scope) => allScopes.includes(scope as any)) }).toEqual({
        op: op.operationId,
        known: true
      })
    }
  })

  it("reading executions and conversations admits any `:execute` scope", () => {
    const declared = Object.fromEntries(operations.map((op) => [op.operationId, op.scope]))
    const anyExecute = ["agents:execute", "flows:execute", "apps:execute"]
    expect([declared["runs.getExecution"], declared["runs.getConversation"], declared["runs.listMessages"]]).toEqual([anyExecute, anyExecute, anyExecute])
  })

  it("the declared scopes are the contract's", () => {
    const declared = Object.fromEntries(operations.map((op) => [op.operationId, op.scope]))
    expect(declared).toMatchObject({
      "agents.list": "agents:read",
      "knowledgebases.list": "knowledge:read",
      "knowledgebases.create": "knowledge:write",
      "knowledgebases.get": "knowledge:read"
    })
  })

  it("each operation refuses a key with every scope but its own, and admits a key with only its own past authorization", async () => {
    const call = (op: Operation, key: string) =>
      server.request(op.method, op.path.replace(/^\/api\/v1/, "").replace(/\{[^}]+\}/g, existingKb), {
        key,
        ...(op.method === "POST" ? { body: { name: `Via ${op.operationId}` } } : {})
      })
    const check = async (op: Operation, without: string, only: string) => {
      const refused = await call(op, without)
      expect({ op: op.operationId, status: refused.status, code: refused.body?.error?.code }).toEqual({
        op: op.operationId,
        status: 403,
        code: "insufficient_scope"
      })
      // Admitted means past authorization: the operation may still refuse the generic body or ids (400/404).
      const admitted = await call(op, only)
      expect({ op: op.operationId, authorized: admitted.status !== 401 && admitted.status !== 403 }).toEqual({
        op: op.operationId,
        authorized: true
      })
    }
    // Per set of admitting scopes: a key with every scope but those, and a key with the first of
    // them alone (each alternative alone is checked by the runs suite); both revoked after use, so
    // the organization stays under its 20 active keys.
    const groups = new Map<string, Array<Operation>>()
    for (const op of operations) {
      const name = admitting(op).join(",")
      groups.set(name, [...(groups.get(name) ?? []), op])
    }
    for (const [name, ops] of groups) {
      const scopes = name.split(",")
      const withoutKey = await createKeyRecord(server, { name: "without", scopes: allScopes.filter((s) => !scopes.includes(s)) })
      const onlyKey = await createKeyRecord(server, { name: "only", scopes: [scopes[0] as (typeof allScopes)[number]] })
      for (const op of ops) await check(op, withoutKey.secret, onlyKey.secret)
      for (const key of [withoutKey, onlyKey]) {
        await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.revokeKey("default", key.key.id)))
      }
    }
  })
})

