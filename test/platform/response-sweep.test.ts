/**
 * The response recorder (test/support/response-recorder.ts) and the sweep of `npm run conformance`
 * (scripts/conformance/response-sweep.ts): real answers of a real server are recorded as they come,
 * validate against the served OpenAPI document, and an answer that strays from it (a missing
 * field, an undeclared status or content type, a streamed event of the wrong shape) is reported.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { RecordedResponse } from "../../scripts/conformance/recorded-response.js"
import { compileResponseSchemas, readRecordings, sweepRecords } from "../../scripts/conformance/response-sweep.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
let document: any
let recorded: Array<RecordedResponse>
const dir = mkdtempSync(join(tmpdir(), "svc-sweep-test-"))

beforeAll(async () => {
  server = await startTestServer()
  document = (await server.request("GET", "/openapi.json", { key: null })).body
  const before = process.env.SVC_RECORD_RESPONSES
  process.env.SVC_RECORD_RESPONSES = dir
  try {
    await server.request("GET", "/agents")
    await server.request("POST", "/knowledgebases", { body: { name: "Swept" } })
    await server.request("GET", "/knowledgebases/00000000-0000-4000-8000-000000000000")
    await server.request("GET", "/agents?limit=0")
    await server.request("GET", "/no-such-path")
  } finally {
    if (before === undefined) delete process.env.SVC_RECORD_RESPONSES
    else process.env.SVC_RECORD_RESPONSES = before
  }
  recorded = [...readRecordings(dir)]
})
afterAll(async () => {
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe("the recorder", () => {
  it("writes one line per answer, in order, with its method, path, query, status, content type and body", () => {
    expect(readdirSync(dir)).toHaveLength(1)
    expect(recorded.map((record) => [record.method, record.path, record.query, record.status, record.contentType.split(";")[0]])).toEqual([
      ["GET", "/api/v1/agents", "", 200, "application/json"],
      ["POST", "/api/v1/knowledgebases", "", 201, "application/json"],
      ["GET", "/api/v1/knowledgebases/00000000-0000-4000-8000-000000000000", "", 404, "application/json"],
      ["GET", "/api/v1/agents", "?limit=0", 400, "application/json"],
      ["GET", "/api/v1/no-such-path", "", 404, "application/json"]
    ])
    expect(JSON.parse(recorded[1]!.body!).knowledgebase.name).toBe("Swept")
  })

  it("records nothing without SVC_RECORD_RESPONSES", async () => {
    const lines = recorded.length
    await server.request("GET", "/agents")
    expect([...readRecordings(dir)]).toHaveLength(lines)
  })
})

describe("the sweep", () => {
  it("finds the real answers as the document declares them; a path no operation has is counted, not judged", () => {
    const report = sweepRecords(document, recorded)
    expect(report.problems).toEqual([])
    expect({ records: report.records, validated: report.validated, noOperation: report.noOperation, seen: report.operationsSeen }).toEqual({
      records: 5,
      validated: 4,
      noOperation: 1,
      seen: 3
    })
  })

  it("reports a body missing a required field, an undeclared status and an undeclared content type", () => {
    const created = recorded[1]!
    const body = JSON.parse(created.body!)
    delete body.knowledgebase.id
    const report = sweepRecords(document, [
      { ...created, body: JSON.stringify(body) },
      { ...created, status: 418 },
      { ...recorded[0]!, contentType: "text/html; charset=utf-8" }
    ])
    expect(report.problems.map((problem) => [problem.operation, problem.status, problem.message.split(":")[0]])).toEqual([
      ["knowledgebases.create", 201, "body does not match its schema"],
      ["knowledgebases.create", 418, "status not declared (declared"],
      ["agents.list", 200, "content type 'text/html' not declared (application/json)"]
    ])
    expect(report.problems[0]!.message).toContain("must have required property 'id'")
    expect(report.problems[0]!.example).toBe("POST /api/v1/knowledgebases")
  })

  it("checks each event of a streamed answer against its schema under x-events", () => {
    const [template, item] = Object.entries(document.paths as Record<string, any>).find(([, item]) =>
      Object.values(item).some((operation: any) => operation?.responses?.["200"]?.content?.["text/event-stream"] !== undefined)
    )!
    const method = Object.keys(item).find((name) => item[name]?.responses?.["200"]?.content?.["text/event-stream"] !== undefined)!
    const path = template.replace(/\{[^}]+\}/g, "00000000-0000-4000-8000-000000000000")
    const stream = (events: ReadonlyArray<[string, string]>): RecordedResponse => ({
      method: method.toUpperCase(),
      path,
      query: "",
      status: 200,
      contentType: "text/event-stream",
      body: events.map(([event, data]) => `event: ${event}\ndata: ${data}\n\n`).join("")
    })
    const good = stream([["delta", JSON.stringify({ text: "Hello" })]])
    expect(sweepRecords(document, [good]).problems).toEqual([])
    const report = sweepRecords(document, [stream([["delta", JSON.stringify({ text: 5 })], ["bogus", "{}"], ["delta", "not json"]])])
    expect(report.problems.map((problem) => problem.message.split(":")[0])).toEqual([
      "event 'delta' does not match its schema",
      "event 'bogus' not declared (start, tool, delta, done, error)",
      "event 'delta'"
    ])
    expect(report.problems[2]!.message).toBe("event 'delta': its data is not JSON")
  })
})

describe("Ajv 2020 and the served document", () => {
  it("compiles the schema of every response and streamed event", () => {
    expect(compileResponseSchemas(document)).toBeGreaterThan(400)
  })

  it("refuses a document that defines one $id twice", () => {
    const twice = structuredClone(document)
    const schemas = twice.components.schemas
    const [first, second] = Object.keys(schemas)
    schemas[first!] = { ...schemas[first!], $id: "/schemas/twice" }
    schemas[second!] = { ...schemas[second!], $id: "/schemas/twice" }
    expect(() => compileResponseSchemas(twice)).toThrow(/already exists|twice/)
  })
})
