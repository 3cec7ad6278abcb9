/**
 * `GET /openapi.json`: a valid OpenAPI 3.1 description, readable without a key, with stable
 * operation ids, bearer security, the documented error envelope on every error response, and the
 * `Idempotency-Key` header and examples on the create.
 */
import { validate } from "@readme/openapi-parser"
import { Ajv2020 } from "ajv/dist/2020.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { requestIdPattern } from "../support/fixtures.js"
import { startTestServer, type TestResponse, type TestServer } from "../support/server.js"

let server: TestServer
let response: TestResponse
let doc: any
beforeAll(async () => {
  server = await startTestServer()
  response = await server.request("GET", "/openapi.json", { key: null })
  doc = response.body
})
afterAll(() => server.stop())

/** Status of each error code (spec: Errors; conventions: Errors the spec leaves open); `plan_group` has two. */
const statusOfCode: Record<string, number | ReadonlyArray<number>> = {
  unauthorized: 401,
  invalid_api_key: 401,
  api_key_revoked: 401,
  insufficient_scope: 403,
  api_disabled: 403,
  groups_disabled: 403,
  plan_limit: 403,
  insufficient_role: 403,
  invalid_request: 400,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  export_too_large: 413,
  insufficient_credits: 402,
  grants_unsupported: 400,
  portal_scope_unsupported: 400,
  deleted_identity: 409,
  live_paid_subscription: 409,
  tier_not_found: 422,
  group_not_found: 422,
  grant_target_not_found: 422,
  plan_group: [422, 409],
  run_failed: 502,
  run_cancelled: 409,
  rate_limited: 429,
  server_error: 500
}

const operations = (): Array<{ method: string; path: string; op: any }> =>
  Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item)
      .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
      .map(([method, op]) => ({ method, path, op }))
  )

const resolve = (schema: any): any => {
  if (typeof schema?.$ref !== "string") return schema
  const name = schema.$ref.replace("#/components/schemas/", "")
  const target = doc.components.schemas[name]
  expect({ ref: schema.$ref, found: target !== undefined }).toEqual({ ref: schema.$ref, found: true })
  return resolve(target)
}

/** The error codes an envelope schema allows, asserting it is `{error:{code,message}}`. */
const envelopeCodes = (schema: any): Array<string> => {
  const resolved = resolve(schema)
  const members = resolved.anyOf ?? resolved.oneOf
  if (Array.isArray(members)) return members.flatMap(envelopeCodes)
  expect(resolved).toMatchObject({ type: "object", required: ["error"] })
  const error = resolve(resolved.properties.error)
  expect(error).toMatchObject({ type: "object" })
  expect([...error.required].sort()).toEqual(["code", "message"])
  expect(Object.keys(error.properties).sort()).toEqual(["code", "message"])
  expect(resolve(error.properties.message)).toMatchObject({ type: "string" })
  const code = resolve(error.properties.code)
  const codes: Array<string> = code.enum ?? (code.const === undefined ? [] : [code.const])
  expect(codes.length).toBeGreaterThan(0)
  return codes
}

describe("the document", () => {
  it("is served without a key, as JSON, with a request id", () => {
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^application\/json/)
    expect(response.headers.get("x-request-id")).toMatch(requestIdPattern)
  })

  it("is valid OpenAPI 3.1", async () => {
    expect(doc.openapi).toMatch(/^3\.1\./)
    const result = await validate(structuredClone(doc))
    expect(result.valid ? [] : result.errors.map((e) => e.message)).toEqual([])
    expect(result.valid).toBe(true)
  })

  it("has stable operation ids", () => {
    const ids = Object.fromEntries(operations().map(({ method, path, op }) => [op.operationId, `${method.toUpperCase()} ${path}`]))
    expect(ids).toMatchObject({
      "knowledgebases.list": "GET /api/v1/knowledgebases",
      "knowledgebases.create": "POST /api/v1/knowledgebases",
      "knowledgebases.get": "GET /api/v1/knowledgebases/{id}",
      "agents.list": "GET /api/v1/agents"
    })
    const all = operations().map(({ op }) => op.operationId)
    expect(new Set(all).size).toBe(all.length)
  })

  it("leaks no framework schema", () => {
    const text = JSON.stringify(doc)
    for (const name of ["HttpApiDecodeError", "ParseError", "RouteNotFound", "PropertyKey"]) expect(text).not.toContain(name)
  })
})

describe("what tools nobody here wrote need of it (issue 23)", () => {
  it("names in servers the address that served it", async () => {
    const origin = server.baseUrl.replace(/\/api\/v1$/, "")
    expect(doc.servers).toEqual([{ url: origin, description: "The `svc serve` that served this document." }])
    const viaLocalhost = await fetch(`${origin.replace("127.0.0.1", "localhost")}/api/v1/openapi.json`)
    expect(((await viaLocalhost.json()) as any).servers[0].url).toBe(origin.replace("127.0.0.1", "localhost"))
  })

  it("has no $id twice, and Ajv (JSON Schema 2020-12) compiles every component schema", () => {
    const ids: Array<string> = []
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) return value.forEach(walk)
      if (value === null || typeof value !== "object") return
      const id = (value as { $id?: unknown }).$id
      if (typeof id === "string") ids.push(id)
      Object.values(value).forEach(walk)
    }
    walk(doc)
    expect(ids.length).toBe(new Set(ids).size)
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    ajv.addSchema({ $id: "doc", components: doc.components })
    for (const name of Object.keys(doc.components.schemas)) {
      expect(() => ajv.getSchema(`doc#/components/schemas/${name}`), name).not.toThrow()
    }
  })

  it("declares the streamed answer of every operation that takes stream, with its events", () => {
    const streamed = Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
      Object.entries(item)
        .filter(([, operation]: [string, any]) => operation.responses?.["200"]?.content?.["text/event-stream"] !== undefined)
        .map(([method]) => `${method.toUpperCase()} ${path}`)
    )
    expect(streamed.sort()).toEqual(
      [
        "POST /api/v1/agents/{id}/conversation",
        "POST /api/v1/agents/{id}/draft/run",
        "POST /api/v1/apps/{id}/conversation",
        "POST /api/v1/apps/{id}/draft/run",
        "POST /api/v1/flows/{id}/draft/run",
        "POST /api/v1/flows/{id}/run",
        "GET /api/v1/executions/{id}/events"
      ].sort()
    )
    const media = doc.paths["/api/v1/agents/{id}/conversation"].post.responses["200"].content
    expect(Object.keys(media["text/event-stream"]["x-events"])).toEqual(["start", "tool", "delta", "done", "error"])
    expect(media["text/event-stream"]["x-events"].done.schema).toEqual(media["application/json"].schema)
  })

  it("declares the events replayed by GET /executions/{id}/events: done is the answer of any streamed run", () => {
    const runs = Object.values(doc.paths).flatMap((item: any) =>
      Object.values(item).filter((operation: any) => operation.requestBody !== undefined && operation.responses?.["200"]?.content?.["text/event-stream"])
    )
    const replayed = doc.paths["/api/v1/executions/{id}/events"].get.responses["200"].content["text/event-stream"]["x-events"]
    expect(Object.keys(replayed)).toEqual(["start", "tool", "delta", "done", "error"])
    const answers = new Set(runs.map((operation: any) => JSON.stringify(operation.responses["200"].content["application/json"].schema)))
    expect(new Set(replayed.done.schema.anyOf.map((schema: unknown) => JSON.stringify(schema)))).toEqual(answers)
    expect(answers.size).toBeGreaterThan(1)
  })
})

describe("security", () => {
  it("declares bearer authentication, required by every operation", () => {
    const schemes = doc.components.securitySchemes
    const bearer = Object.entries<any>(schemes).filter(([, s]) => s.type === "http" && s.scheme.toLowerCase() === "bearer")
    expect(bearer).toHaveLength(1)
    const [bearerName] = bearer[0]!
    for (const { op } of operations()) {
      expect({ op: op.operationId, security: op.security }).toEqual({
        op: op.operationId,
        // One scope, or alternatives (any of them admits) for operations declared with `anyScope`.
        security: [op["x-required-scope"]].flat().map((scope: string) => ({ [bearerName]: [scope] }))
      })
    }
  })
})

describe("responses", () => {
  it("every error response of every operation is the {error:{code,message}} envelope with codes of its status", () => {
    for (const { op } of operations()) {
      const statuses = Object.keys(op.responses)
      for (const required of ["400", "401", "403", "429", "500"]) {
        expect({ op: op.operationId, has: statuses.includes(required) }).toEqual({ op: op.operationId, has: true })
      }
      for (const [status, res] of Object.entries<any>(op.responses)) {
        if (status.startsWith("2")) continue
        const schema = res.content?.["application/json"]?.schema
        expect({ op: op.operationId, status, documented: schema !== undefined }).toEqual({ op: op.operationId, status, documented: true })
        for (const code of envelopeCodes(schema)) {
          const allowed = statusOfCode[code]
          const matches = Array.isArray(allowed) ? allowed.includes(Number(status)) : allowed === Number(status)
          expect({ op: op.operationId, code, status, matches }).toEqual({ op: op.operationId, code, status, matches: true })
        }
      }
    }
  })

  it("documents the codes each operation can answer", () => {
    const codesOf = (operationId: string) => {
      const { op } = operations().find(({ op }) => op.operationId === operationId)!
      return new Set(
        Object.entries<any>(op.responses)
          .filter(([status]) => !status.startsWith("2"))
          .flatMap(([, res]) => envelopeCodes(res.content["application/json"].schema))
      )
    }
    const auth = ["unauthorized", "invalid_api_key", "api_key_revoked", "insufficient_scope", "api_disabled", "rate_limited"]
    for (const id of ["knowledgebases.list", "knowledgebases.create", "knowledgebases.get", "agents.list"]) {
      const codes = codesOf(id)
      for (const code of [...auth, "invalid_request", "server_error"]) expect({ id, code, has: codes.has(code) }).toEqual({ id, code, has: true })
    }
    for (const code of ["plan_limit", "conflict", "payload_too_large"]) expect(codesOf("knowledgebases.create").has(code)).toBe(true)
    expect(codesOf("knowledgebases.get").has("not_found")).toBe(true)
  })

  it("every response documents X-Request-Id, and 429 documents Retry-After", () => {
    for (const { op } of operations()) {
      for (const [status, res] of Object.entries<any>(op.responses)) {
        const headers = Object.fromEntries(Object.entries<any>(res.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]))
        expect({ op: op.operationId, status, requestId: "x-request-id" in headers }).toEqual({
          op: op.operationId,
          status,
          requestId: true
        })
        if (status === "429") expect("retry-after" in headers).toBe(true)
      }
    }
  })

  it("success bodies are the documented shapes", () => {
    const success = (operationId: string) => {
      const { op } = operations().find(({ op }) => op.operationId === operationId)!
      const [status, res] = Object.entries<any>(op.responses).find(([s]) => s.startsWith("2"))!
      return { status, schema: resolve(res.content["application/json"].schema) }
    }
    expect(success("knowledgebases.create").status).toBe("201")
    expect(Object.keys(success("knowledgebases.create").schema.properties)).toEqual(["knowledgebase"])
    expect(Object.keys(success("knowledgebases.get").schema.properties)).toEqual(["knowledgebase"])
    expect(Object.keys(success("knowledgebases.list").schema.properties).sort()).toEqual(["knowledgebases", "nextCursor"])
    expect(Object.keys(success("agents.list").schema.properties).sort()).toEqual(["agents", "nextCursor"])
  })
})

describe("the create", () => {
  const create = () => operations().find(({ op }) => op.operationId === "knowledgebases.create")!.op

  it("declares the optional idempotency-key header of up to 64 characters", () => {
    const header = (create().parameters ?? []).find((p: any) => p.in === "header" && p.name.toLowerCase() === "idempotency-key")
    expect(header).toBeDefined()
    expect(header.required ?? false).toBe(false)
    expect(resolve(header.schema)).toMatchObject({ type: "string", maxLength: 64 })
  })

  it("documents Idempotent-Replayed on its success response", () => {
    const headers = Object.keys(create().responses["201"].headers ?? {}).map((h) => h.toLowerCase())
    expect(headers).toContain("idempotent-replayed")
  })

  it("has examples for its body, and they are accepted by the server", async () => {
    const media = create().requestBody.content["application/json"]
    const schema = resolve(media.schema)
    const examples: Array<unknown> = [
      ...(schema.examples ?? []),
      ...(media.example === undefined ? [] : [media.example]),
      ...Object.values<any>(media.examples ?? {}).map((e) => e.value)
    ]
    expect(examples.length).toBeGreaterThan(0)
    for (const example of examples) {
      const created = await server.request("POST", "/knowledgebases", { body: example })
      expect({ example, status: created.status }).toEqual({ example, status: 201 })
    }
  })

  it("documents the body's limits: name 1 to 200 characters, description up to 2000, nothing else", () => {
    const schema = resolve(create().requestBody.content["application/json"].schema)
    expect(schema.required).toEqual(["name"])
    expect(schema.additionalProperties).toBe(false)
    expect(resolve(schema.properties.name)).toMatchObject({ type: "string", minLength: 1, maxLength: 200 })
    expect(resolve(schema.properties.description)).toMatchObject({ type: "string", maxLength: 2000 })
  })
})
