/**
 * `svc reset`: back to a fresh first start (a new bootstrap key), through the real process; its
 * refusals (no --yes off a terminal, a running server, no data, PostgreSQL) write nothing. The
 * question on a terminal is answered through the program in this process, with a terminal's
 * `isTTY` on its stdin and stdout (a spawned process gets pipes).
 */
import { existsSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Readable } from "node:stream"
import { afterAll, describe, expect, it } from "vitest"
import { runCli } from "../../cli/program.js"
import { testDatabaseEnv } from "../support/server.js"
import { onSqlite } from "../support/postgres.js"
import { backendDataDir, expectEnvelope, expectFailure, freshDataDir, parseOneDocument, removeDataDirs, repoRoot, serveProcess, slow, svcJson, svcProcess } from "./helpers.js"

afterAll(removeDataDirs)

/** Serves `dataDir` until ready, stops it, and answers the ready line. */
const serveOnce = async (dataDir: string) => {
  const served = await serveProcess(dataDir, ["--json", "--quiet"])
  const ready = parseOneDocument(served.stdout())
  expect(await served.stop("SIGTERM")).toBe(0)
  return ready
}

/** What a data directory holds (its files' names), to compare before and after a refusal. */
const snapshot = (dataDir: string) => readdirSync(dataDir).sort()

/** Runs `svc reset` in this process as if on a terminal, answering the question with `answer`. */
const resetOnTerminal = async (dataDir: string, answer: string, env: Readonly<Record<string, string>> = {}) => {
  let stdout = ""
  let stderr = ""
  const stdin = Object.assign(Readable.from([answer]), { isTTY: true })
  const code = await runCli(["reset", "--data-dir", dataDir], {
    env: { CI: "true", ...env },
    cwd: repoRoot,
    stdout: { write: (text) => (stdout += text), isTTY: true, columns: 100 },
    stderr: { write: (text) => (stderr += text), isTTY: true },
    stdin,
    onStop: () => () => undefined
  })
  return { code, stdout, stderr }
}

describe("svc reset", slow, () => {
  it("with --yes, takes a SQLite data directory back to a first start (a new bootstrap key); refuses PostgreSQL, dropping nothing", async () => {
    const dataDir = await backendDataDir()
    const first = await serveOnce(dataDir)
    await svcJson(["orgs", "create", "--slug", "acme"], dataDir)
    writeFileSync(join(dataDir, "notes.txt"), "mine")
    const reset = await svcProcess(["reset", "--yes", "--json"], dataDir)
    if (!onSqlite) {
      expect(reset.code).toBe(1)
      expect(expectEnvelope(reset.stdout)).toEqual({ code: "postgres_not_reset", message: expect.stringMatching(/does not drop the tables of postgres/) })
      expect(reset.stderr).not.toMatch(/:[^:@/*]+@/)
      expect((await svcJson(["orgs", "list"], dataDir)).organizations.map((o: { slug: string }) => o.slug)).toEqual(["acme", "default"])
      return
    }
    expect(reset.stderr).toBe("")
    expect(reset.code).toBe(0)
    expect(parseOneDocument(reset.stdout)).toEqual({ reset: { dataDir, removed: expect.arrayContaining(["svc.sqlite"]) } })
    expect(readdirSync(dataDir)).toEqual(["notes.txt"])
    const second = await serveOnce(dataDir)
    expect(second.bootstrapKey).toMatch(/^svco_/)
    expect(second.bootstrapKey).not.toBe(first.bootstrapKey)
    expect((await svcJson(["orgs", "list"], dataDir)).organizations.map((o: { slug: string }) => o.slug)).toEqual(["default"])
  })

  it("off a terminal without --yes is bad usage (exit 2), and removes nothing", async () => {
    const dataDir = await backendDataDir()
    await serveOnce(dataDir)
    const before = snapshot(dataDir)
    const plain = await svcProcess(["reset"], dataDir)
    expect(expectFailure(plain, 2)).toContain("--yes")
    const json = await svcProcess(["reset", "--json"], dataDir)
    expect(json.code).toBe(2)
    expect(expectEnvelope(json.stdout).code).toBe("invalid_usage")
    expect(snapshot(dataDir)).toEqual(before)
  })

  it("refuses while a server runs on the directory (exit 1), removing nothing", async () => {
    const dataDir = await backendDataDir()
    const served = await serveProcess(dataDir, ["--json", "--quiet"])
    try {
      // The server removes its bootstrap-key-pending record just after printing the key: wait for
      // the start to end before taking the snapshot that must not change.
      for (let waited = 0; existsSync(join(dataDir, "bootstrap-key-pending")) && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
      const before = snapshot(dataDir)
      const refused = await svcProcess(["reset", "--yes", "--json"], dataDir)
      expect(refused.code).toBe(1)
      const error = expectEnvelope(refused.stdout)
      if (onSqlite) expect(error).toEqual({ code: "server_running", message: expect.stringContaining(`pid ${served.child.pid}`) })
      else expect(error.code).toBe("postgres_not_reset")
      expect(snapshot(dataDir)).toEqual(before)
    } finally {
      expect(await served.stop("SIGTERM")).toBe(0)
    }
    expect((await svcJson(["orgs", "list"], dataDir)).organizations).toHaveLength(1)
  })

  it("refuses a directory without data, naming it, and creates nothing", async () => {
    const parent = freshDataDir()
    const missing = join(parent, "none")
    expect(expectFailure(await svcProcess(["reset", "--yes", "--data-dir", missing]), 1)).toBe(`svc: no data directory at ${missing}; nothing to reset.`)
    expect(existsSync(missing)).toBe(false)
  })

  it("asks on a terminal: no keeps everything (exit 1), yes resets; on PostgreSQL it refuses before asking", async () => {
    const dataDir = await backendDataDir()
    await serveOnce(dataDir)
    const before = snapshot(dataDir)
    if (!onSqlite) {
      const refused = await resetOnTerminal(dataDir, "y\n", testDatabaseEnv(dataDir))
      expect(refused.code).toBe(1)
      expect(refused.stderr).not.toContain("? ")
      expect(refused.stderr).toMatch(/^svc: svc reset works on a data directory's SQLite database/)
      expect(snapshot(dataDir)).toEqual(before)
      return
    }
    const kept = await resetOnTerminal(dataDir, "n\n")
    expect(kept.code).toBe(1)
    expect(kept.stderr).toContain(`Reset ${dataDir}? `)
    expect(kept.stderr).toContain(`svc: not reset: nothing in ${dataDir} was removed.`)
    expect(snapshot(dataDir)).toEqual(before)
    const done = await resetOnTerminal(dataDir, "y\n")
    expect(done.code).toBe(0)
    expect(done.stdout).toContain(`Reset ${dataDir}`)
    expect(existsSync(join(dataDir, "svc.sqlite"))).toBe(false)
  })
})
