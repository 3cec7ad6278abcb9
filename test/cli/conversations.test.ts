/**
 * `svc conversations list|export` and `svc runs tail` against a real server: the same answers as
 * the API (a page as one JSON document, a table off a terminal, an export byte for byte, to stdout or
 * a file), the executions followed as they start and end (a run held open by a fake model, then
 * cancelled), exit 2 for bad usage and 1 for refusals with the API's code; and through the built
 * process (`bin/svc.js`) once each.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeOpenAi, type FakeResponse, say, startFakeOpenAi } from "../support/fake-openai.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createAgent } from "../runtime/support.js"
import { eventually } from "../support/timing.js"
import { Readable } from "node:stream"
import { runCli } from "../../cli/program.js"
import { type CliEnv, expectEnvelope, expectFailure, parseOneDocument, slow, start, svc, svcProcess } from "./helpers.js"

let fake: FakeOpenAi
let answer: () => FakeResponse = () => say("fine, thanks")
let server: TestServer
let env: CliEnv
let agent: string
let first: string
let second: string
const files = mkdtempSync(join(tmpdir(), "svc-conversations-"))
const minute = 60_000
const since = "2026-11-21T00:00:00Z"

const turn = async (message: string, conversation?: string) => {
  server.clock.advance(minute)
  const reply = await server.request("POST", `/agents/${agent}/conversation`, {
    body: { message, ...(conversation === undefined ? {} : { conversation_id: conversation }) }
  })
  expect(reply.status).toBe(200)
  return reply.body as { conversation_id: string; executionId: string }
}
const api = async (path: string) => {
  const reply = await server.request("GET", path)
  expect(reply.status).toBe(200)
  return reply
}

beforeAll(async () => {
  fake = await startFakeOpenAi(() => answer())
  server = await startTestServer({ server: { model: { baseUrl: fake.baseUrl, defaultModel: "fake-model", backoffMs: 1, maxAttempts: 2 }, runs: { keepAliveMs: 100 } } })
  env = { SVC_BASE_URL: server.baseUrl, SVC_API_KEY: server.key }
  agent = await createAgent(server, { model: "fake-model" })
  first = (await turn("hello")).conversation_id
  await turn("and again", first)
  second = (await turn("another topic")).conversation_id
}, 60_000)
afterAll(async () => {
  await server.stop()
  await fake.close()
  rmSync(files, { recursive: true, force: true })
})

describe("svc conversations list", () => {
  it("prints the API's page as one JSON document, and a table off a terminal", async () => {
    const json = await svc(["conversations", "list", "--json"], undefined, env)
    expect(json.code).toBe(0)
    expect(json.stderr).toBe("")
    const page = parseOneDocument(json.stdout)
    expect(page).toEqual((await api("/conversations")).body)
    expect(page.conversations.map((c: { id: string }) => c.id)).toEqual([second, first])
    expect(page.conversations[1]).toMatchObject({ turnCount: 2, startedBy: { type: "api_key" } })

    const human = await svc(["conversations", "list"], undefined, env)
    expect(human.code).toBe(0)
    expect(human.stdout).not.toMatch(/\u001b\[/)
    expect(human.stdout).toContain("2 conversations, newest activity first")
    const keyId = page.conversations[0].startedBy.apiKeyId
    expect(human.stdout).toMatch(new RegExp(`${first}\\s+agent ${agent}\\s+key ${keyId}\\s+2\\s+2026-11-21 12:02`))
  })

  it("passes the filters and the cursor through", async () => {
    const one = parseOneDocument((await svc(["conversations", "list", "--target-kind", "agent", "--target-id", agent, "--limit", "1", "--json"], undefined, env)).stdout)
    expect(one.conversations.map((c: { id: string }) => c.id)).toEqual([second])
    expect(one.nextCursor).toEqual(expect.any(String))
    const next = parseOneDocument((await svc(["conversations", "list", "--target-kind", "agent", "--target-id", agent, "--limit", "1", "--cursor", one.nextCursor, "--json"], undefined, env)).stdout)
    expect(next).toEqual({ conversations: [expect.objectContaining({ id: first })], nextCursor: null })
    const recent = parseOneDocument((await svc(["conversations", "list", "--since", "2026-11-21T12:03:00Z", "--json"], undefined, env)).stdout)
    expect(recent.conversations.map((c: { id: string }) => c.id)).toEqual([second])
    const page = parseOneDocument((await svc(["conversations", "list", "--limit", "1", "--json"], undefined, env)).stdout)
    const human = await svc(["conversations", "list", "--limit", "1"], undefined, env)
    expect(human.stdout).toContain(`More: --cursor ${page.nextCursor}`)
  })

  it("exits 2 on bad usage and 1 on a refusal, with the API's code", async () => {
    for (const args of [["--target-kind", "robot"], ["--limit", "500"], ["--limit", "0"], ["--since", "soon"]]) {
      expectFailure(await svc(["conversations", "list", ...args], undefined, env), 2)
    }
    expect(expectFailure(await svc(["conversations", "list"], undefined, { SVC_BASE_URL: server.baseUrl }), 2)).toContain("no API key")
    const readOnly = await server.createKey({ name: "reads", scopes: ["agents:read"] })
    const refused = await svc(["conversations", "list", "--json"], undefined, { ...env, SVC_API_KEY: readOnly })
    expect(refused.code).toBe(1)
    expect(expectEnvelope(refused.stdout).code).toBe("insufficient_scope")
    expect(expectFailure(await svc(["conversations", "list", "--target-id", "nope"], undefined, env), 1)).toMatch(/^svc: invalid_request: /)
  })
})

describe("svc conversations export", () => {
  it("writes the API's JSON Lines to stdout or to a file", async () => {
    const expected = (await api(`/conversations/${first}/export`)).text
    expect(expected.trimEnd().split("\n").map((line) => JSON.parse(line).type)).toEqual(["execution", "message", "message", "execution", "message", "message"])
    const out = await svc(["conversations", "export", first], undefined, env)
    expect(out).toEqual({ code: 0, stdout: expected, stderr: "" })

    const file = join(files, "first.ndjson")
    const written = await svc(["conversations", "export", first, "--output", file], undefined, env)
    expect(written.code).toBe(0)
    expect(written.stdout).toBe("")
    expect(written.stderr).toBe(`Exported 6 lines of conversation ${first} to ${file}\n`)
    expect(readFileSync(file, "utf8")).toBe(expected)
    const json = await svc(["conversations", "export", second, "--output", join(files, "second.ndjson"), "--json"], undefined, env)
    expect(parseOneDocument(json.stdout)).toEqual({ file: join(files, "second.ndjson"), lines: 3, bytes: Buffer.byteLength((await api(`/conversations/${second}/export`)).text) })
  })

  it("refuses an unknown conversation with exit 1 and writes no file", async () => {
    const file = join(files, "none.ndjson")
    const refused = await svc(["conversations", "export", "00000000-0000-4000-8000-000000000000", "--output", file], undefined, env)
    expect(expectFailure(refused, 1)).toMatch(/^svc: not_found: /)
    expect(() => readFileSync(file)).toThrow()
    expectFailure(await svc(["conversations", "export"], undefined, env), 2)
  })
})

describe("svc runs tail", () => {
  it("--once prints every execution active since --since, oldest first, as JSON Lines or lines", async () => {
    const all = (await api("/executions")).body.executions.reverse()
    const json = await svc(["runs", "tail", "--once", "--since", since, "--json"], undefined, env)
    expect(json.code).toBe(0)
    expect(json.stdout.trimEnd().split("\n").map((line) => JSON.parse(line))).toEqual(all)
    const human = await svc(["runs", "tail", "--once", "--since", since], undefined, env)
    const lines = human.stdout.trimEnd().split("\n")
    expect(lines).toHaveLength(3)
    expect(lines[0]).toBe(`${all[0].finishedAt}  succeeded agent       ${all[0].id}  target ${agent}  conversation ${first}`)
    expectFailure(await svc(["runs", "tail", "--kind", "robot"], undefined, env), 2)
    const narrow = await server.createKey({ name: "agents only", scopes: ["agents:execute"] })
    expect(expectFailure(await svc(["runs", "tail", "--once", "--kind", "app"], undefined, { ...env, SVC_API_KEY: narrow }), 1)).toMatch(/^svc: insufficient_scope: /)
  })

  it("follows an execution as it starts and as it ends, once each, and stops on request", async () => {
    const from = new Date(server.clock.now() + 1).toISOString()
    const tail = start(["runs", "tail", "--since", from, "--interval", "20", "--json"], undefined, env)
    answer = () => ({ parts: [{ kind: "text", text: "partial" }, { kind: "hang" }] })
    server.clock.advance(minute)
    const call = server.request("POST", `/agents/${agent}/conversation`, { body: { message: "take your time" } })
    await tail.waitFor((stdout) => stdout.includes('"status":"running"'))
    const running = JSON.parse(tail.stdout().trimEnd().split("\n")[0]!)
    expect(running).toMatchObject({ kind: "agent", status: "running", finishedAt: null })
    server.clock.advance(1000)
    expect((await server.request("POST", `/executions/${running.id}/cancel`)).status).toBe(200)
    expect((await call).status).toBe(409)
    await tail.waitFor((stdout) => stdout.includes('"status":"cancelled"'))
    await eventually(async () => (await api(`/executions/${running.id}`)).body.execution.status === "cancelled")
    const result = await tail.stop()
    answer = () => say("fine, thanks")
    expect(result.code).toBe(0)
    const seen = result.stdout.trimEnd().split("\n").map((line) => JSON.parse(line))
    expect(seen.map((e) => [e.id, e.status])).toEqual([
      [running.id, "running"],
      [running.id, "cancelled"]
    ])
    expect(seen[1]).toEqual((await api(`/executions/${running.id}?view=summary`)).body.execution)
  })
})

describe("on a terminal", () => {
  /** Runs `svc ...args` in this process with stdout a terminal; answers the exit code, stdout and stderr. */
  const onTerminal = async (args: ReadonlyArray<string>) => {
    let stdout = ""
    let stderr = ""
    const code = await runCli(args, {
      env,
      cwd: files,
      stdout: { write: (chunk) => (stdout += chunk), isTTY: true, columns: 200 },
      stderr: { write: (chunk) => (stderr += chunk) },
      stdin: Readable.from([]),
      onStop: () => () => undefined
    })
    return { code, stdout, stderr }
  }

  it("lists as an ink table and colors the statuses runs tail prints", async () => {
    const list = await onTerminal(["conversations", "list"])
    expect(list.code).toBe(0)
    // ink's headline mark; the plain renderer has none.
    expect(list.stdout).toMatch(/^● 3 conversations, newest activity first$/m)
    expect(list.stdout).toContain(first)
    expect((await svc(["conversations", "list"], undefined, env)).stdout).not.toContain("●")
    const tail = await onTerminal(["runs", "tail", "--once", "--since", since])
    expect(tail.code).toBe(0)
    const lines = tail.stdout.trimEnd().split("\n")
    expect(lines.length).toBeGreaterThanOrEqual(3)
    expect(lines[0]).toContain("\u001b[32msucceeded\u001b[39m")
    expect(lines[0]!.replace(/\u001b\[\d+m/g, "")).toBe((await svc(["runs", "tail", "--once", "--since", since], undefined, env)).stdout.split("\n")[0])
  })
})

describe("through the built process", slow, () => {
  it("lists, exports and tails", async () => {
    const list = await svcProcess(["conversations", "list", "--json"], undefined, env)
    expect(list.code).toBe(0)
    expect(parseOneDocument(list.stdout)).toEqual((await api("/conversations")).body)
    const exported = await svcProcess(["conversations", "export", first], undefined, env)
    expect(exported).toEqual({ code: 0, stdout: (await api(`/conversations/${first}/export`)).text, stderr: "" })
    const tail = await svcProcess(["runs", "tail", "--once", "--since", since, "--json"], undefined, env)
    expect(tail.code).toBe(0)
    expect(tail.stdout.trimEnd().split("\n").map((line) => JSON.parse(line))).toEqual((await api("/executions")).body.executions.reverse())
    const usage = await svcProcess(["runs", "tail", "--interval", "0"], undefined, env)
    expect(usage.code).toBe(2)
  })
})
