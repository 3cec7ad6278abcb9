/**
 * The local-testing options of `svc serve`: `--ephemeral` (a temporary data directory removed at
 * exit), `--rate-limit N` (requests per minute per key), and the `server.json` record of the running
 * server that `svc status` and `svc reset` read. Real processes.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { apiGet, backendDataDir, expectFailure, freshDataDir, parseOneDocument, removeDataDirs, serveProcess, slow, svc } from "./helpers.js"

afterAll(removeDataDirs)

describe("svc serve for local testing", slow, () => {
  it("--ephemeral serves a fresh organization from a temporary directory and removes it at exit", async () => {
    const served = await serveProcess(freshDataDir(), ["--json", "--ephemeral"])
    const ready = parseOneDocument(served.stdout())
    expect(ready.bootstrapKey).toMatch(/^svco_/)
    expect(ready.dataDir).toMatch(/svc-ephemeral-/)
    expect(existsSync(join(ready.dataDir, "svc.sqlite"))).toBe(true)
    expect((await apiGet(ready.baseUrl, "/knowledgebases", ready.bootstrapKey)).status).toBe(200)
    expect(await served.stop("SIGTERM")).toBe(0)
    expect(existsSync(ready.dataDir)).toBe(false)
  })

  it("--ephemeral with --data-dir or --database is bad usage (exit 2), and creates nothing", async () => {
    const dir = freshDataDir()
    expect(expectFailure(await svc(["serve", "--ephemeral", "--data-dir", join(dir, "d")]), 2)).toContain("--ephemeral")
    expect(expectFailure(await svc(["serve", "--ephemeral", "--database", "postgres://x@127.0.0.1:1/x"]), 2)).toContain("--ephemeral")
    expect(existsSync(join(dir, "d"))).toBe(false)
  })

  it("--rate-limit N answers the N+1th request of a minute with 429 and Retry-After", async () => {
    const served = await serveProcess(await backendDataDir(), ["--json", "--rate-limit", "3", "--quiet"])
    try {
      const ready = parseOneDocument(served.stdout())
      const statuses: Array<number> = []
      for (let i = 0; i < 4; i++) statuses.push((await apiGet(ready.baseUrl, "/knowledgebases", ready.bootstrapKey)).status)
      expect(statuses).toEqual([200, 200, 200, 429])
      const refused = await fetch(`${ready.baseUrl}/knowledgebases`, { headers: { authorization: `Bearer ${ready.bootstrapKey}` } })
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("rate_limited")
    } finally {
      expect(await served.stop()).toBe(0)
    }
  })

  it("refuses a bad --rate-limit as usage (exit 2), naming the value", async () => {
    for (const value of ["0", "-5", "many"]) {
      expect(expectFailure(await svc(["serve", "--rate-limit", value], freshDataDir()), 2)).toContain(value)
    }
  })

  it("records the running server in server.json (pid, addresses) and removes the record when it stops", async () => {
    const dataDir = await backendDataDir()
    const served = await serveProcess(dataDir, ["--json"])
    const ready = parseOneDocument(served.stdout())
    const record = JSON.parse(readFileSync(join(dataDir, "server.json"), "utf8"))
    expect(record).toEqual({ pid: served.child.pid, baseUrl: ready.baseUrl, mcpUrl: ready.mcpUrl, startedAt: expect.any(String) })
    expect(await served.stop("SIGINT")).toBe(0)
    expect(existsSync(join(dataDir, "server.json"))).toBe(false)
  })
})
