/**
 * `svc status` through the real process: the server running on the data directory (its
 * `server.json`, only while its process lives), the organizations with their plan and key prefixes
 * (never a secret), and the counts of the main objects; a refusal that creates nothing on a
 * directory without data.
 */
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { onSqlite } from "../support/postgres.js"
import { backendDataDir, emptyDataDir, expectEnvelope, expectFailure, freshDataDir, parseOneDocument, removeDataDirs, serveProcess, slow, svcJson, svcProcess } from "./helpers.js"

afterAll(removeDataDirs)

const post = async (baseUrl: string, path: string, key: string, body: unknown) => {
  const response = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  expect(response.status).toBe(201)
}

const noCounts = {
  knowledgebases: 0,
  pages: 0,
  sources: 0,
  agents: 0,
  flows: 0,
  apps: 0,
  endUsers: 0,
  plans: 0,
  portals: 0,
  suites: 0,
  conversations: 0,
  executions: 0
}

/** `svc status --json` on `dataDir`, through the real process, expecting success. */
const status = async (dataDir: string) => {
  const result = await svcProcess(["status", "--json"], dataDir)
  expect(result.stderr).toBe("")
  expect(result.code).toBe(0)
  return { document: parseOneDocument(result.stdout), stdout: result.stdout }
}

describe("svc status", slow, () => {
  it("reports the running server, organizations with key prefixes, and counts; then that it stopped", async () => {
    const dataDir = await backendDataDir()
    const served = await serveProcess(dataDir, ["--json", "--quiet"])
    const ready = parseOneDocument(served.stdout())
    try {
      await post(ready.baseUrl, "/knowledgebases", ready.bootstrapKey, { name: "Handbook" })
      await post(ready.baseUrl, "/agents", ready.bootstrapKey, { name: "Helper" })
      await svcJson(["plans", "create", "--org", "default", "--name", "Gold", "--credits", "100"], dataDir)
      await svcJson(["orgs", "create", "--slug", "acme", "--plan", "trial"], dataDir)

      const { document, stdout } = await status(dataDir)
      expect(stdout).not.toContain(ready.bootstrapKey)
      expect(document).toEqual({
        running: true,
        server: { pid: served.child.pid, baseUrl: ready.baseUrl, mcpUrl: ready.mcpUrl, startedAt: expect.any(String) },
        dataDir,
        database: onSqlite ? { kind: "sqlite", file: join(dataDir, "svc.sqlite") } : { kind: "postgres", url: expect.stringMatching(/^postgres/) },
        organizations: [
          { id: expect.any(String), slug: "acme", name: "acme", plan: "trial", keys: [], counts: noCounts },
          {
            id: ready.organization.id,
            slug: "default",
            name: "Default",
            plan: "pro",
            keys: [{ id: expect.any(String), name: "bootstrap", kind: "organization", prefix: ready.bootstrapKey.slice(0, 12) }],
            counts: { ...noCounts, knowledgebases: 1, agents: 1, plans: 1 }
          }
        ]
      })
    } finally {
      expect(await served.stop("SIGTERM")).toBe(0)
    }
    const after = (await status(dataDir)).document
    expect(after.running).toBe(false)
    expect(after.server).toBeNull()
    expect(after.organizations.map((o: { slug: string }) => o.slug)).toEqual(["acme", "default"])
  })

  it("takes a server.json whose process is gone as no server, and prints plain text off a terminal", async () => {
    const dataDir = await emptyDataDir()
    await svcJson(["orgs", "create", "--slug", "acme"], dataDir)
    const gone = spawnSync(process.execPath, ["-e", "process.pid"]).pid
    writeFileSync(join(dataDir, "server.json"), JSON.stringify({ pid: gone, baseUrl: "http://127.0.0.1:1/api/v1", mcpUrl: "http://127.0.0.1:1/mcp", startedAt: "2026-01-01T00:00:00.000Z" }))
    expect((await status(dataDir)).document).toMatchObject({ running: false, server: null })
    const human = await svcProcess(["status"], dataDir)
    expect(human.code).toBe(0)
    expect(human.stdout).not.toMatch(/\u001b\[/)
    expect(human.stdout).toContain("No server is running on")
    expect(human.stdout).toMatch(/acme\s+acme\s+pro\s+none/)
    expect(human.stdout).toMatch(/Knowledgebases\s+0/)
  })

  it("refuses a directory without data (exit 1, naming it) and creates nothing", async () => {
    const parent = freshDataDir()
    const missing = join(parent, "nothing-here")
    const plain = await svcProcess(["status", "--data-dir", missing])
    expect(expectFailure(plain, 1)).toBe(`svc: no data directory at ${missing}; pass --data-dir (svc serve creates one there).`)
    const json = await svcProcess(["status", "--data-dir", parent, "--json"])
    expect(json.code).toBe(1)
    expect(expectEnvelope(json.stdout)).toEqual({ code: "no_data_directory", message: expect.stringContaining(parent) })
    expect(existsSync(missing)).toBe(false)
    expect(readdirSync(parent)).toEqual([])
  })
})
