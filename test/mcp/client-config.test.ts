/**
 * `svc mcp config --client …`: each printed configuration is started exactly as printed, from another
 * working directory (as desktop clients start servers from their own folder), and lists the tools:
 * stdio launches through the MCP SDK's stdio client, HTTP entries through its Streamable HTTP client,
 * and Claude Code's `claude mcp add …` line run by a shell whose `claude` records what it was given.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { execFileSync } from "node:child_process"
import { chmodSync, readFileSync, writeFileSync } from "node:fs"
import { isAbsolute, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectFailure, freshDataDir, parseOneDocument, removeDataDirs, svc } from "../cli/helpers.js"
import { startTestServer, testDatabaseEnv, type TestServer } from "../support/server.js"
import { personalKey } from "../support/mcp.js"

interface Launch {
  readonly command: string
  readonly args: Array<string>
  readonly env: Record<string, string>
}

let server: TestServer
let key: string
/** `--database URL` on PostgreSQL (the data directory then holds no SQLite file), else nothing. */
let databaseArgs: Array<string>

beforeAll(async () => {
  server = await startTestServer()
  key = await personalKey(server, "desk@example.com", "member")
  const url = testDatabaseEnv(server.dataDir).SVC_DATABASE_URL
  databaseArgs = url === undefined ? [] : ["--database", url]
})
afterAll(async () => {
  await server.stop()
  await removeDataDirs()
})

/** `svc mcp config …args --json`, run from a directory that is not the checkout. */
const config = async (args: ReadonlyArray<string>): Promise<any> => {
  const result = await svc(["mcp", "config", ...args, "--json"], undefined, {}, freshDataDir())
  expect(result.stderr).toBe("")
  expect(result.code).toBe(0)
  return parseOneDocument(result.stdout)
}

/** The tool names offered through `transport`, by the MCP SDK's client. */
const toolsThrough = async (transport: Transport): Promise<Array<string>> => {
  const client = new Client({ name: "config-test", version: "1.0.0" })
  await client.connect(transport)
  try {
    return (await client.listTools()).tools.map((tool) => tool.name)
  } finally {
    await client.close()
  }
}

/** The tool names a stdio launch offers, started as printed from a fresh working directory. */
const stdioTools = (launch: Launch): Promise<Array<string>> => {
  expect(isAbsolute(launch.command)).toBe(true)
  expect(isAbsolute(launch.args[0]!)).toBe(true)
  return toolsThrough(new StdioClientTransport({ command: launch.command, args: launch.args, env: launch.env, cwd: freshDataDir(), stderr: "pipe" }))
}

/** The tool names an HTTP entry offers. */
const httpTools = (entry: { url: string; headers?: Record<string, string> }): Promise<Array<string>> =>
  toolsThrough(new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers ?? {} } }))

describe("svc mcp config", () => {
  it("claude-desktop: an absolute node and bin/svc.js on the data directory, never npx, that serves the tools", async () => {
    const printed = await config(["--client", "claude-desktop", "--data-dir", server.dataDir, ...databaseArgs, "--api-key", key])
    const launch = printed.config.mcpServers.svc as Launch
    expect(launch.command).toBe(process.execPath)
    expect(launch.args).toEqual([expect.stringMatching(/bin\/svc\.js$/), "mcp", "--data-dir", server.dataDir, ...databaseArgs])
    expect(launch.env).toEqual({ SVC_API_KEY: key })
    expect(JSON.stringify(printed)).not.toContain("npx")
    expect(await stdioTools(launch)).toContain("whoami")
  })

  it("claude-desktop with --url: the stdio bridge to the running server", async () => {
    const printed = await config(["--client", "claude-desktop", "--url", server.mcpUrl, "--api-key", key])
    const launch = printed.config.mcpServers.svc as Launch
    expect(launch.args.slice(1)).toEqual(["mcp", "--url", server.mcpUrl])
    expect(await stdioTools(launch)).toContain("search_knowledgebase")
  })

  it("cursor and vscode: a stdio launch on the data directory, or the HTTP address with the key as a header", async () => {
    const cursor = await config(["--client", "cursor", "--data-dir", server.dataDir, ...databaseArgs, "--api-key", key])
    expect(await stdioTools(cursor.config.mcpServers.svc)).toContain("whoami")
    const vscode = await config(["--client", "vscode", "--data-dir", server.dataDir, ...databaseArgs, "--api-key", key])
    const { type, ...launch } = vscode.config.servers.svc
    expect(type).toBe("stdio")
    expect(await stdioTools(launch)).toContain("whoami")

    const cursorHttp = await config(["--client", "cursor", "--url", server.mcpUrl, "--api-key", key])
    expect(cursorHttp.config.mcpServers.svc).toEqual({ url: server.mcpUrl, headers: { Authorization: `Bearer ${key}` } })
    expect(await httpTools(cursorHttp.config.mcpServers.svc)).toContain("whoami")
    const vscodeHttp = await config(["--client", "vscode", "--url", server.mcpUrl, "--api-key", key])
    expect(vscodeHttp.config.servers.svc).toEqual({ type: "http", url: server.mcpUrl, headers: { Authorization: `Bearer ${key}` } })
    expect(await httpTools(vscodeHttp.config.servers.svc)).toContain("whoami")
  })

  it("claude-code: a `claude mcp add` line that, run by a shell, registers the same launch", async () => {
    const printed = await config(["--client", "claude-code", "--data-dir", server.dataDir, ...databaseArgs, "--api-key", key])
    expect(printed.command).toMatch(/^claude mcp add /)
    const bin = freshDataDir()
    const record = join(bin, "argv.json")
    writeFileSync(join(bin, "claude"), `#!${process.execPath}\nrequire("node:fs").writeFileSync(${JSON.stringify(record)}, JSON.stringify(process.argv.slice(2)))\n`)
    chmodSync(join(bin, "claude"), 0o755)
    execFileSync("sh", ["-c", printed.command], { cwd: freshDataDir(), env: { PATH: `${bin}:${process.env.PATH}` } })
    const argv = JSON.parse(readFileSync(record, "utf8")) as Array<string>
    const split = argv.indexOf("--")
    expect(argv.slice(0, split)).toEqual(["mcp", "add", "--env", `SVC_API_KEY=${key}`, "svc"])
    const [command, ...args] = argv.slice(split + 1)
    expect(await stdioTools({ command: command!, args, env: { SVC_API_KEY: key } })).toContain("whoami")
  })

  it("prints the paste-ready text off --json, and says where it goes on stderr", async () => {
    const result = await svc(["mcp", "config", "--client", "cursor", "--url", server.mcpUrl], undefined, {}, freshDataDir())
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({ mcpServers: { svc: { url: server.mcpUrl } } })
    expect(result.stderr).toContain("mcp.json")
  })

  it("refuses a data directory with nothing in it (exit 1) and an unknown client or a bad --url (exit 2), naming the value", async () => {
    const empty = freshDataDir()
    expect(expectFailure(await svc(["mcp", "config", "--client", "cursor", "--data-dir", empty], undefined, {}, empty), 1)).toContain(empty)
    expect(expectFailure(await svc(["mcp", "config", "--client", "zed"]), 2)).toContain("'zed'")
    expect(expectFailure(await svc(["mcp", "config", "--client", "cursor", "--url", "ftp://x"]), 2)).toContain("ftp://x")
    expect(expectFailure(await svc(["mcp", "config", "--client", "cursor", "--url", server.mcpUrl, "--data-dir", empty]), 2)).toContain("not both")
  })
})
