import { afterAll, describe, expect, it } from "vitest"
import { backendDataDir, parseOneDocument, removeDataDirs, slow, start } from "./helpers.js"

afterAll(removeDataDirs)

/** Starts `svc serve --port 0 ...args` in this process; resolves with the run and its base URL and key. */
const served = async (args: ReadonlyArray<string>) => {
  const run = start(["serve", "--port", "0", "--json", ...args], await backendDataDir())
  await run.waitFor((out) => out.endsWith("\n"))
  const ready = parseOneDocument(run.stdout())
  return { run, baseUrl: ready.baseUrl as string, key: ready.bootstrapKey as string }
}

const call = async (url: string, key: string, init: RequestInit = {}) => {
  const response = await fetch(url, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } })
  await response.text()
  return { status: response.status, requestId: response.headers.get("x-request-id") }
}

describe("svc serve request log", slow, () => {
  it("with --json writes one JSON line per request on stderr: method, path without the query, status, duration, request id; never a key", async () => {
    const { run, baseUrl, key } = await served([])
    const listed = await call(`${baseUrl}/knowledgebases?limit=5&fields=id`, key)
    const badCursor = await call(`${baseUrl}/knowledgebases?cursor=secret-cursor-value`, key)
    const refused = await call(`${baseUrl}/knowledgebases`, "svco_notAKeyAtAllNotAKeyAtAllNotAKeyAtAll00")
    const created = await call(`${baseUrl}/knowledgebases`, key, { method: "POST", body: JSON.stringify({ name: "Secret name" }) })
    const result = await run.stop()
    expect(result.code).toBe(0)
    const lines = result.stderr.trimEnd().split("\n").map((line) => JSON.parse(line))
    const entry = (method: string, status: number, requestId: string | null) => ({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      method,
      path: "/api/v1/knowledgebases",
      status,
      durationMs: expect.any(Number),
      requestId
    })
    expect(lines).toEqual([
      entry("GET", 200, listed.requestId),
      entry("GET", 400, badCursor.requestId),
      entry("GET", 401, refused.requestId),
      entry("POST", 201, created.requestId)
    ])
    expect(listed.requestId).toMatch(/^req_/)
    for (const secret of [key, "secret-cursor-value", "svco_notAKey", "Secret name", "Bearer"]) expect(result.stderr).not.toContain(secret)
  })

  it("writes a line for MCP requests too (answered in front of the API), with their request ids", async () => {
    const { run, baseUrl, key } = await served([])
    const origin = new URL(baseUrl).origin
    const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "log", version: "1" } } }
    const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" }
    const refused = await fetch(`${origin}/mcp?tools=knowledge`, { method: "POST", headers: mcpHeaders, body: JSON.stringify(initialize) })
    await refused.text()
    const orgKey = await fetch(`${origin}/mcp`, { method: "POST", headers: { ...mcpHeaders, authorization: `Bearer ${key}` }, body: JSON.stringify(initialize) })
    await orgKey.text()
    const metadata = await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`)
    await metadata.text()
    const result = await run.stop()
    expect(result.code).toBe(0)
    const lines = result.stderr.trimEnd().split("\n").map((line) => JSON.parse(line))
    expect(lines).toEqual([
      expect.objectContaining({ method: "POST", path: "/mcp", status: 401, requestId: refused.headers.get("x-request-id") }),
      expect.objectContaining({ method: "POST", path: "/mcp", status: 403, requestId: orgKey.headers.get("x-request-id") }),
      expect.objectContaining({ method: "GET", path: "/.well-known/oauth-protected-resource/mcp", status: 200, requestId: metadata.headers.get("x-request-id") })
    ])
    expect(orgKey.headers.get("x-request-id")).toMatch(/^req_/)
    expect(result.stderr).not.toContain(key)
  })

  it("writes one line for every other door too, with the X-Request-Id its answer carries: a write the fast lane hands on, OAuth, the Portal, an unknown path", async () => {
    const { run, baseUrl, key } = await served([])
    const origin = new URL(baseUrl).origin
    const handedOn = await call(`${baseUrl}/knowledgebases`, "svco_notAKeyAtAllNotAKeyAtAllNotAKeyAtAll00", { method: "POST", body: JSON.stringify({ name: "x" }) })
    const oauthMetadata = await fetch(`${origin}/.well-known/oauth-authorization-server`)
    await oauthMetadata.text()
    const token = await fetch(`${origin}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "grant_type=nothing" })
    await token.text()
    const portal = await fetch(`${origin}/portals/no-such-portal/`)
    await portal.text()
    const unknown = await call(`${origin}/no/such/path`, key)
    const result = await run.stop()
    expect(result.code).toBe(0)
    const lines = result.stderr.trimEnd().split("\n").map((line) => JSON.parse(line))
    const answers = [
      { method: "POST", path: "/api/v1/knowledgebases", status: handedOn.status, requestId: handedOn.requestId },
      { method: "GET", path: "/.well-known/oauth-authorization-server", status: oauthMetadata.status, requestId: oauthMetadata.headers.get("x-request-id") },
      { method: "POST", path: "/oauth/token", status: token.status, requestId: token.headers.get("x-request-id") },
      { method: "GET", path: "/portals/no-such-portal/", status: portal.status, requestId: portal.headers.get("x-request-id") },
      { method: "GET", path: "/no/such/path", status: unknown.status, requestId: unknown.requestId }
    ]
    expect(lines).toEqual(answers.map((answer) => expect.objectContaining(answer)))
    expect(answers.map((answer) => answer.status)).toEqual([401, 200, 400, 404, 404])
    for (const answer of answers) expect(answer.requestId).toMatch(/^req_[0-9a-f]{32}$/)
    expect(new Set(answers.map((answer) => answer.requestId)).size).toBe(answers.length)
  })

  it("without --json writes readable lines, and with --quiet none", async () => {
    const dataDir = await backendDataDir()
    const human = start(["serve", "--port", "0"], dataDir)
    await human.waitFor((out) => out.includes("Ctrl+C"))
    expect(human.stdout()).toContain("one line per request (--quiet for none)")
    const baseUrl = /Base URL: +(\S+)/.exec(human.stdout())![1]!
    const key = /svco_\w+/.exec(human.stdout())![0]
    const read = await call(`${baseUrl}/knowledgebases?fields=id`, key)
    const result = await human.stop()
    expect(result.code).toBe(0)
    const line = result.stderr.split("\n").find((l) => l.includes(" GET "))
    expect(line).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\S+Z GET /api/v1/knowledgebases 200 \\d+(\\.\\d)?ms ${read.requestId}$`))
    expect(result.stderr).not.toContain(key)

    const quiet = await served(["--quiet"])
    expect((await call(`${quiet.baseUrl}/knowledgebases`, quiet.key)).status).toBe(200)
    const silent = await quiet.run.stop()
    expect(silent.code).toBe(0)
    expect(silent.stderr).toBe("")
  })
})
