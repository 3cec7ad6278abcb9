/**
 * `svc mcp` as desktop clients run it: the real process (`node bin/svc.js mcp`, compiled by the
 * build step of `npm test`) over stdio, in-process on the data directory and bridged to a running
 * server with `--url`, through the MCP SDK's stdio client; stdout carries nothing but JSON-RPC.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { repoRoot } from "../cli/helpers.js"
import { startTestServer, testDatabaseEnv, type TestServer } from "../support/server.js"
import { call, personalKey, toolNames } from "../support/mcp.js"

const bin = join(repoRoot, "bin", "svc.js")
let server: TestServer
let key: string

const baseEnv = () => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith("SVC_")) env[name] = value
  return { ...env, CI: "true", NO_COLOR: "1", ...testDatabaseEnv(server.dataDir) }
}

/** A client of `svc mcp ...args` over stdio. */
const stdioClient = async (args: ReadonlyArray<string>, apiKey = key) => {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, "mcp", ...args], env: { ...baseEnv(), SVC_API_KEY: apiKey }, stderr: "pipe", cwd: repoRoot })
  const client = new Client({ name: "stdio-test", version: "1.0.0" })
  const errors: Array<Error> = []
  client.onerror = (error) => errors.push(error)
  await client.connect(transport)
  return { client, errors }
}

beforeAll(async () => {
  server = await startTestServer()
  key = await personalKey(server, "desk@example.com", "member")
})
afterAll(() => server.stop())

describe("svc mcp in-process on the data directory", () => {
  it("serves the tools of the key's member, and shows a role change on the next request", async () => {
    const { client, errors } = await stdioClient(["--data-dir", server.dataDir, "--tools", "knowledge"])
    const who = await call(client, "whoami")
    expect(who.body).toMatchObject({ organization: { slug: "default" }, role: "member", families: ["knowledge"] })
    const made = await call(client, "create_knowledgebase", { name: "From stdio" })
    expect(made.isError).toBe(false)
    expect(await toolNames(client)).toContain("save_page")
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setMemberRole("default", "desk@example.com", "viewer")))
    expect(await toolNames(client)).not.toContain("save_page")
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setMemberRole("default", "desk@example.com", "member")))
    const rest = await server.request("GET", "/knowledgebases")
    expect(rest.body.knowledgebases.map((kb: { name: string }) => kb.name)).toContain("From stdio")
    expect(errors).toEqual([])
    await client.close()
  })

  it("refuses an organization key: exit 1, the reason on stderr, nothing on stdout", async () => {
    const child = spawn(process.execPath, [bin, "mcp", "--data-dir", server.dataDir], { cwd: repoRoot, env: { ...baseEnv(), SVC_API_KEY: server.key } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const code = await new Promise((resolve) => child.on("close", resolve))
    expect(code).toBe(1)
    expect(stdout).toBe("")
    expect(stderr).toContain("Organization keys are not accepted")
  })

  it("writes nothing but JSON-RPC on stdout", async () => {
    const child = spawn(process.execPath, [bin, "mcp", "--data-dir", server.dataDir], { cwd: repoRoot, env: { ...baseEnv(), SVC_API_KEY: key } })
    let stdout = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`)
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })
    send({ jsonrpc: "2.0", method: "notifications/initialized" })
    send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} })
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "upload_source", arguments: { knowledgebaseId: "From stdio", name: "Notes", contentText: "Plain notes." } } })
    send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "search_docs", arguments: { query: "personal keys" } } })
    const answered = () => stdout.includes('"id":3') && stdout.includes('"id":4')
    for (let attempt = 0; attempt < 200 && !answered(); attempt++) await new Promise((resolve) => setTimeout(resolve, 25))
    await new Promise((resolve) => setTimeout(resolve, 300))
    child.stdin.end()
    await new Promise((resolve) => child.on("close", resolve))
    const lines = stdout.split("\n").filter((line) => line !== "")
    expect(lines.length).toBeGreaterThanOrEqual(4)
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" })
    expect(lines.map((line) => JSON.parse(line).id).filter((id) => id !== undefined).sort()).toEqual([1, 2, 3, 4])
  })
})

describe("svc mcp --url, bridged to a running server", () => {
  it("relays requests and answers to the server's MCP address", async () => {
    const { client, errors } = await stdioClient(["--url", server.mcpUrl, "--tools", "knowledge"])
    const who = await call(client, "whoami")
    expect(who.body).toMatchObject({ organization: { slug: "default" }, families: ["knowledge"] })
    const listed = await call(client, "list_knowledgebases", { fields: ["name"] })
    expect(listed.body.items).toContainEqual({ name: "From stdio" })
    expect(errors).toEqual([])
    await client.close()
  })

  it("passes the server's refusal of an organization key on as a JSON-RPC error", async () => {
    await expect(stdioClient(["--url", server.mcpUrl], server.key)).rejects.toThrow(/Organization keys|403/)
  })
})
