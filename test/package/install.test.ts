/**
 * The package as a user gets it: `npm pack` makes a tarball holding the built CLI and SDK (and not
 * the sources, tests or benchmarks), which installs into an empty project offline, gives a working
 * `svc` command and resolves `svc-local/sdk`.
 *
 * It packs the `dist/` of the last `npm run build` (as the CLI tests run it). The install runs
 * offline from the npm cache `npm ci` filled: npm 11 resolves a range with the full registry
 * document, which that cache does not keep, so the project gets a lockfile made from this
 * repository's (same versions, tarball addresses and integrities), and npm only unpacks cached
 * tarballs. `--ignore-scripts` leaves better-sqlite3 unbuilt: `svc --help` must not load it.
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot } from "../cli/helpers.js"

interface LockEntry {
  readonly name?: string
  readonly version?: string
  readonly resolved?: string
  readonly link?: boolean
  readonly dev?: boolean
  readonly [field: string]: unknown
}

const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  name: string
  version: string
  license: string
  bin: Record<string, string>
  engines: Record<string, string>
  dependencies: Record<string, string>
}
const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 45_000 })

/**
 * A lockfile for a project depending only on the tarball: the tarball itself, then every
 * non-development package of this repository's lockfile at the same place, with its registry
 * address (npm fetches a locked tarball by address and integrity, so the cache is enough).
 */
const lockfileFor = (tarball: string, integrity: string) => {
  const repoLock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> }
  const root = { name: "installs-svc", version: "1.0.0", dependencies: { [manifest.name]: `file:${tarball}` } }
  const packages: Record<string, LockEntry> = {
    "": root,
    [`node_modules/${manifest.name}`]: {
      version: manifest.version,
      resolved: `file:${tarball}`,
      integrity,
      license: manifest.license,
      dependencies: manifest.dependencies,
      bin: manifest.bin,
      engines: manifest.engines
    }
  }
  for (const [path, entry] of Object.entries(repoLock.packages)) {
    if (!path.startsWith("node_modules/") || entry.dev === true) continue
    if (entry.link === true) {
      // The msgpackr-extract stub ships inside the package (`packaging/`).
      packages[path] = { resolved: `node_modules/${manifest.name}/${entry.resolved}`, link: true }
      packages[`node_modules/${manifest.name}/${entry.resolved}`] = repoLock.packages[entry.resolved!]!
      continue
    }
    const name = entry.name ?? path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length)
    const file = `${name.slice(name.lastIndexOf("/") + 1)}-${entry.version}.tgz`
    packages[path] = { ...entry, resolved: entry.resolved ?? `https://registry.npmjs.org/${name}/-/${file}` }
  }
  return { root, lock: { name: root.name, version: root.version, lockfileVersion: 3, requires: true, packages } }
}

let dir: string
let project: string
let files: Array<string>

beforeAll(() => {
  if (!existsSync(join(repoRoot, "dist", "cli", "main.js"))) throw new Error("dist/ is missing: run `npm run build` first")
  dir = mkdtempSync(join(tmpdir(), "svc-pack-"))
  const packed = JSON.parse(run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], repoRoot)) as Array<{
    filename: string
    files: Array<{ path: string }>
  }>
  files = packed[0]!.files.map((file) => file.path)
  const tarball = packed[0]!.filename
  project = join(dir, "project")
  execFileSync("mkdir", [project])
  execFileSync("cp", [join(dir, tarball), project])
  const integrity = `sha512-${createHash("sha512").update(readFileSync(join(project, tarball))).digest("base64")}`
  const { root, lock } = lockfileFor(tarball, integrity)
  writeFileSync(join(project, "package.json"), JSON.stringify({ ...root, private: true, type: "module" }, null, 2))
  writeFileSync(join(project, "package-lock.json"), JSON.stringify(lock, null, 2))
  run("npm", ["install", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], project)
}, 90_000)

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe("the packed package", () => {
  it("holds the built CLI, server and SDK, the bin, the stub, the demo's content and the README; no sources, tests or benchmarks", () => {
    for (const file of ["bin/svc.js", "dist/cli/main.js", "dist/server/server.js", "dist/sdk/index.js", "dist/sdk/index.d.ts", "README.md", "package.json"]) {
      expect(files).toContain(file)
    }
    expect(files).toContain("packaging/msgpackr-extract-stub/package.json")
    expect(files).toContain("fixtures/demo/price-list.pdf")
    expect(files).toContain("fixtures/demo/pages/02-refunds.md")
    expect(files.filter((file) => /^(server|cli|sdk|test|bench|scripts)\//.test(file) || /^fixtures\/(?!demo\/)/.test(file) || /^dist\/(test|bench|scripts)\//.test(file))).toEqual([])
  })

  it("installed from the tarball, `svc --help` and `svc --version` run (better-sqlite3 left unbuilt)", () => {
    expect(existsSync(join(project, "node_modules", "better-sqlite3", "build"))).toBe(false)
    const help = run(join(project, "node_modules", ".bin", "svc"), ["--help"], project)
    expect(help).toMatch(/^Usage: svc /)
    expect(help).toContain("serve")
    expect(run(join(project, "node_modules", ".bin", "svc"), ["--version"], project).trim()).toBe(manifest.version)
  })

  it("installed from the tarball, `svc-local/sdk` imports with its client and error classes", () => {
    const script = `
      const sdk = await import("svc-local/sdk")
      const svc = new sdk.Svc({ baseUrl: "http://127.0.0.1:1/api/v1", apiKey: "svco_x" })
      console.log(JSON.stringify({ list: typeof svc.knowledgebases.list, error: typeof sdk.NotFoundError }))
      await svc.close()
    `
    expect(JSON.parse(run(process.execPath, ["--input-type=module", "-e", script], project))).toEqual({ list: "function", error: "function" })
  })
})
