/**
 * Body media types, for every operation of `GET /openapi.json` that takes a body: JSON endpoints
 * take only JSON (`application/json`, `application/*+json`, or no Content-Type at all), the upload
 * takes JSON or `multipart/form-data`; anything else is 400 `invalid_request` naming what is
 * accepted, never a 5xx, and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { countKnowledgebases, expectError } from "../support/fixtures.js"
import { type DocumentFixture, startDocumentFixture } from "../support/operations.js"
import type { TestServer } from "../support/server.js"
import { sourceTableCounts } from "../support/source-rows.js"

let server: TestServer
let fixture: DocumentFixture
beforeAll(async () => {
  fixture = await startDocumentFixture("Content types")
  server = fixture.server
})
afterAll(() => server.stop())

/** Every operation of the document that declares a request body, its path filled with real ids. */
const operationsWithBodies = (): Array<{ method: string; path: string; accepted: Array<string> }> =>
  fixture
    .operations()
    .filter(({ operation }) => operation.requestBody !== undefined)
    .map(({ method, path, operation }) => ({ method, path, accepted: Object.keys(operation.requestBody.content) }))

const wrongBodies: ReadonlyArray<readonly [label: string, contentType: string, body: string]> = [
  ["multipart/form-data without a boundary", "multipart/form-data", "--xyz\r\nbroken"],
  ["multipart/form-data with a body that is not multipart", "multipart/form-data; boundary=xyz", '{"name":"Not multipart"}'],
  ["application/x-www-form-urlencoded", "application/x-www-form-urlencoded", "name=Formed&title=Formed&text=Formed"],
  ["text/plain", "text/plain", '{"name":"Plain"}'],
  ["application/xml", "application/xml", "<knowledgebase><name>Xml</name></knowledgebase>"],
  ["an invalid Content-Type", "garbage", '{"name":"Garbage"}'],
  ["a Content-Type without a subtype", "application/", '{"name":"Half"}']
]

describe("wrong body media types on every operation that takes a body", () => {
  it("the document lists the operations (sanity: the loop below is not empty)", () => {
    const operations = operationsWithBodies()
    expect(operations.length).toBeGreaterThanOrEqual(8)
    expect(operations.find((operation) => operation.path.endsWith("/sources"))?.accepted.sort()).toEqual([
      "application/json",
      "multipart/form-data"
    ])
  })

  it.each(wrongBodies)("%s → 400 invalid_request on each, no 5xx, nothing written", async (_label, contentType, body) => {
    const knowledgebases = await countKnowledgebases(server)
    const sources = await sourceTableCounts(server)
    for (const operation of operationsWithBodies()) {
      const response = await server.request(operation.method, operation.path, { body, headers: { "content-type": contentType } })
      const where = `${operation.method} ${operation.path}: ${response.status} ${response.text}`
      expect(response.status, where).toBeLessThan(500)
      const message = expectError(response, 400, "invalid_request")
      const multipartAccepted = operation.accepted.includes("multipart/form-data")
      if (!(multipartAccepted && contentType.startsWith("multipart/"))) expect(message, where).toContain("application/json")
    }
    expect(await countKnowledgebases(server)).toBe(knowledgebases)
    expect(await sourceTableCounts(server)).toEqual(sources)
  })
})

describe("what is accepted", () => {
  it.each([
    ["application/json", "application/json"],
    ["application/json with a charset", "application/json; charset=utf-8"],
    ["a +json type", "application/vnd.svc+json"],
    ["no Content-Type (read as JSON)", undefined]
  ])("%s → the create runs", async (_label, contentType) => {
    const body = JSON.stringify({ name: `Typed ${contentType ?? "none"}` })
    const response = await fetch(`${server.baseUrl}/knowledgebases`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}`, ...(contentType === undefined ? {} : { "content-type": contentType }) },
      body: new TextEncoder().encode(body)
    })
    expect(response.status).toBe(201)
  })

  it("a form body is refused naming the accepted type", async () => {
    const message = expectError(
      await server.request("POST", "/knowledgebases", {
        body: "name=Formed",
        headers: { "content-type": "application/x-www-form-urlencoded" }
      }),
      400,
      "invalid_request"
    )
    expect(message).toMatch(/application\/x-www-form-urlencoded.*application\/json/)
  })
})
