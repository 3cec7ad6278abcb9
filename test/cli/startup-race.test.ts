/**
 * Admin commands run while `svc serve` starts: real processes, started right after the server
 * (without waiting for its ready line), several at a time. None may fail: not with `database is
 * locked` (the server and the commands migrating, or writing, the same SQLite file at once), not with
 * a missing table (one process reading the other's migration as done before it committed), not with
 * a missing organization `default` (the first start not yet through its bootstrap).
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { onSqlite } from "../support/postgres.js"
import { backendDataDir, type CliResult, parseOneDocument, removeDataDirs, slow, startProcess, svcJson, svcProcess } from "./helpers.js"

afterAll(removeDataDirs)

const until = async (test: () => boolean): Promise<void> => {
  for (const started = Date.now(); !test(); ) {
    if (Date.now() - started > 60_000) throw new Error("timed out")
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/**
 * Twenty commands in four waves of five at once. On SQLite they run on a fresh data directory in
 * organization `default`, which the first start makes, half of them leaving `--org` out (the only
 * organization). On PostgreSQL the database exists before the server starts and nothing tells a
 * command that a first start is under way, so they act in `acme`, made before the start.
 */
const waves = (org: string): ReadonlyArray<ReadonlyArray<ReadonlyArray<string>>> => {
  const orgArgs = onSqlite ? [] : ["--org", org]
  return [
    [["orgs", "show", org], ["keys", "list", ...orgArgs], ["orgs", "list"], ["status"], ["plans", "list", ...orgArgs]],
    [["members", "add", "--org", org, "--email", "ann@example.com", "--role", "member"], ["portals", "list", ...orgArgs], ["suites", "list", "--org", org], ["keys", "list", "--org", org], ["mail", "list"]],
    [["plans", "create", ...orgArgs, "--name", "Gold", "--credits", "100"], ["portals", "create", ...orgArgs, "--name", "Shop"], ["status"], ["orgs", "show", org], ["members", "sessions", ...orgArgs, "--email", "ann@example.com"]],
    [["keys", "create", "--org", org, "--name", "ci", "--all-scopes"], ["suites", "create", ...orgArgs, "--name", "All"], ["orgs", "list"], ["plans", "list", "--org", org], ["status"]]
  ]
}

describe("admin commands while svc serve starts", slow, () => {
  it("all succeed, started right after svc serve, several at a time", async () => {
    const dataDir = await backendDataDir()
    const org = onSqlite ? "default" : "acme"
    if (!onSqlite) await svcJson(["orgs", "create", "--slug", org], dataDir)
    // --demo: the first start writes for a while (the demo's content, its PDF's ingestion), as a
    // server does while it is used; without the fix a write here failed with `database is locked`.
    const server = startProcess(["serve", "--port", "0", "--json", "--quiet", "--demo"], dataDir)
    try {
      // On SQLite there is nothing to administer before the server has made the database file.
      if (onSqlite) await until(() => existsSync(join(dataDir, "svc.sqlite")) || server.child.exitCode !== null)
      const results: Array<CliResult & { readonly args: string }> = []
      for (const [index, wave] of waves(org).entries()) {
        const running = wave.map((args) => svcProcess([...args, "--json"], dataDir).then((result) => ({ ...result, args: args.join(" ") })))
        // The first wave starts before the server is ready: the start is what is under test.
        if (index === 0) expect(server.stdout()).toBe("")
        results.push(...(await Promise.all(running)))
      }
      const failed = results.filter((result) => result.code !== 0 || result.stderr !== "")
      expect(failed.map((result) => `${result.args}: ${result.code} ${result.stderr.trim()}`)).toEqual([])
      for (const result of results) parseOneDocument(result.stdout)
      await server.waitFor((stdout) => stdout.includes("\n"))
      const ready = parseOneDocument(server.stdout())
      expect(ready.organization.slug).toBe("default")
      if (onSqlite) expect(ready.bootstrapKey).toMatch(/^svco_/)
      expect(ready.demo.knowledgebaseId).toEqual(expect.any(String))
      const status = parseOneDocument((await svcProcess(["status", "--json"], dataDir)).stdout)
      const counted = status.organizations.find((o: { slug: string }) => o.slug === org)
      expect(counted.counts).toMatchObject({ plans: 1, portals: 1, suites: 1 })
    } finally {
      const stopped = await server.stop("SIGTERM")
      expect(stopped.code, stopped.stderr).toBe(0)
    }
  })
})
