/**
 * The benchmarks' cache-miss switch: while on, `PRAGMA data_version` never reads the same twice
 * (so every cache keyed on it misses), other statements answer as before, and off restores
 * better-sqlite3's own reading; the svc launcher switches it on a line of its stdin (the test spawns
 * dist/bench/svc-launcher.js: build first, as for the CLI tests).
 */
import Database from "better-sqlite3"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { cacheMisses } from "../../bench/cache-misses.js"
import { type Child, setSvcCaches, spawnChild } from "../../bench/children.js"
import type { SvcReady } from "../../bench/protocol.js"

describe("cacheMisses", () => {
  const switches: Array<ReturnType<typeof cacheMisses>> = []
  afterEach(() => {
    for (const misses of switches.splice(0)) misses.set(false)
  })

  it("makes every reading of data_version new while on, and changes nothing else", () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-cache-misses-"))
    const db = new Database(join(dir, "db.sqlite"))
    try {
      db.exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (42)")
      const version = db.prepare("PRAGMA data_version").pluck()
      const value = db.prepare("SELECT x FROM t").pluck()
      const misses = cacheMisses()
      switches.push(misses)

      const kept = version.get()
      expect(version.get()).toBe(kept)
      expect(misses.missing()).toBe(false)

      misses.set(true)
      expect(misses.missing()).toBe(true)
      const readings = [version.get(), version.get(), version.get()]
      expect(new Set([kept, ...readings]).size).toBe(4)
      expect(value.get()).toBe(42)

      misses.set(false)
      expect(version.get()).toBe(kept)
      expect(version.get()).toBe(kept)
    } finally {
      db.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("svc launcher", () => {
  let child: Child<SvcReady> | null = null
  let dataDir: string | null = null
  afterEach(async () => {
    await child?.stop()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  })

  it("answers `caches missing` and `caches kept` once in effect, and keeps serving", async () => {
    dataDir = mkdtempSync(join(tmpdir(), "svc-launcher-"))
    child = await spawnChild<SvcReady>({
      name: "svc",
      script: resolve("dist/bench/svc-launcher.js"),
      args: ["--data-dir", dataDir, "--port", "0"],
      logFile: join(dataDir, "svc.stderr.log")
    })
    const list = async () =>
      (await fetch(`${child!.ready.baseUrl}/knowledgebases`, { headers: { authorization: `Bearer ${child!.ready.bootstrapKey}` } })).status
    await setSvcCaches(child, "missing")
    expect(await list()).toBe(200)
    await setSvcCaches(child, "kept")
    expect(await list()).toBe(200)
  })
})
