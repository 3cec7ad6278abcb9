/**
 * The package as a user gets it, proved from outside the checkout: `npm pack` makes a tarball
 * holding the built CLI and SDK (and not the sources, tests or benchmarks), which installs into an
 * empty temporary project without compiling anything; with that project as the working directory,
 * `svc --version`, `svc serve --demo --port 0 --json` (the demo's ids in the ready line), `svc mcp`
 * over stdio through the MCP SDK's client, and the README's SDK snippet compiled by `tsc --strict`
 * and run against that server all work.
 *
 * It packs the `dist/` of the last `npm run build` (as the CLI tests run it). The install runs
 * offline from the npm cache `npm ci` filled: npm 11 resolves a range with the full registry
 * document, which that cache does not keep, so the project gets a lockfile made from this
 * repository's (same versions, tarball addresses and integrities), and npm only unpacks cached
 * tarballs. `--ignore-scripts` leaves better-sqlite3 unbuilt (`svc --help` must not load it); before
 * the server starts, the native module this checkout's `npm ci` built is copied in, as an install
 * with scripts would build it (about 90 s here), so the test does not compile it a second time.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot } from "../cli/helpers.js"
import { readmeSdkSnippet } from "../support/readme.js"

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
const run = (command: string, args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv = process.env) =>
  execFileSync(command, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 })

/** What a user's fresh TypeScript project installs beside the package to compile the snippet. */
const snippetToolchain = ["typescript", "@types/node", "undici-types"]

/**
 * A lockfile for a project depending only on the tarball: the tarball itself, then every
 * non-development package of this repository's lockfile at the same place, with its registry
 * address (npm fetches a locked tarball by address and integrity, so the cache is enough).
 */
const lockfileFor = (tarball: string, integrity: string) => {
  const repoLock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> }
  const devDependencies = Object.fromEntries(snippetToolchain.slice(0, 2).map((name) => [name, repoLock.packages[`node_modules/${name}`]!.version!]))
  const root = { name: "installs-svc", version: "1.0.0", dependencies: { [manifest.name]: `file:${tarball}` }, devDependencies }
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
    const toolchain = snippetToolchain.some((name) => path === `node_modules/${name}`)
    if (!path.startsWith("node_modules/") || (entry.dev === true && !toolchain)) continue
    if (entry.link === true) {
      // The msgpackr-extract stub ships inside the package (`packaging/`).
      packages[path] = { resolved: `node_modules/${manifest.name}/${entry.resolved}`, link: true }
      packages[`node_modules/${manifest.name}/${entry.resolved}`] = repoLock.packages[entry.resolved!]!
      continue
    }
    const name = entry.name ?? path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length)
    const file = `${name.slice(name.lastIndexOf("/") + 1)}-${entry.version}.tgz`
    const { dev: _dev, ...kept } = entry
    packages[path] = { ...kept, ...(entry.dev === true ? { dev: true } : {}), resolved: entry.resolved ?? `https://registry.npmjs.org/${name}/-/${file}` }
  }
  return { root, lock: { name: root.name, version: root.version, lockfileVersion: 3, requires: true, packages } }
}

let dir: string
let project: string
let files: Array<string>
let server: ChildProcess | undefined

/** The installed `svc` command, as `npx svc` in the project runs it. */
const svcBin = () => join(project, "node_modules", ".bin", "svc")
/** The project's environment: nothing of the checkout's svc settings. */
const projectEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: "true", ...extra }
  for (const name of Object.keys(env)) if (name.startsWith("SVC_") && !(name in extra)) delete env[name]
  return env
}

beforeAll(() => {
  if (!existsSync(join(repoRoot, "dist", "cli-bundle", "main.js"))) throw new Error("dist/ is missing: run `npm run build` first")
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
}, 180_000)

afterAll(() => {
  server?.kill("SIGTERM")
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** Starts `svc serve ...args` in the project and resolves with its one ready line. */
const serveInProject = (args: ReadonlyArray<string>): Promise<any> =>
  new Promise((resolve, reject) => {
    const child = spawn(svcBin(), ["serve", ...args], { cwd: project, env: projectEnv(), stdio: ["ignore", "pipe", "pipe"] })
    server = child
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      if (stdout.includes("\n")) resolve(JSON.parse(stdout.slice(0, stdout.indexOf("\n"))))
    })
    child.on("exit", (code) => reject(new Error(`svc serve exited with ${code}: ${stderr}`)))
  })

describe("the packed package", () => {
  it("holds the built CLI, server and SDK, the bin, the stub, the demo's content and the README; no sources, tests or benchmarks", () => {
    for (const file of ["bin/svc.js", "dist/server/server.js", "dist/sdk/index.js", "dist/sdk/index.d.ts", "README.md", "package.json"]) {
      expect(files).toContain(file)
    }
    const entry = /import\s+"\.\.\/(dist\/[^"]+)"/.exec(readFileSync(join(repoRoot, "bin", "svc.js"), "utf8"))?.[1]
    expect(files).toContain(entry)
    expect(files).toContain("packaging/msgpackr-extract-stub/package.json")
    expect(files).toContain("fixtures/demo/price-list.pdf")
    expect(files).toContain("fixtures/demo/pages/02-refunds.md")
    expect(files.filter((file) => /^(server|cli|sdk|test|bench|scripts)\//.test(file) || /^fixtures\/(?!demo\/)/.test(file) || /^dist\/(test|bench|scripts)\//.test(file))).toEqual([])
  })

  it("installs without compiling: `svc --help` and `svc --version` run from the project (better-sqlite3 left unbuilt)", () => {
    expect(existsSync(join(project, "node_modules", "better-sqlite3", "build"))).toBe(false)
    const help = run(svcBin(), ["--help"], project, projectEnv())
    expect(help).toMatch(/^Usage: svc /)
    expect(help).toContain("serve")
    expect(run(svcBin(), ["--version"], project, projectEnv()).trim()).toBe(manifest.version)
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

  describe("run from the project", () => {
    let ready: any
    beforeAll(async () => {
      cpSync(join(repoRoot, "node_modules", "better-sqlite3", "build"), join(project, "node_modules", "better-sqlite3", "build"), { recursive: true })
      ready = await serveInProject(["--demo", "--port", "0", "--json"])
    }, 60_000)

    it("`svc serve --demo --port 0 --json` serves the project's ./.svc and names the demo in its ready line", () => {
      expect(ready.dataDir).toBe(join(project, ".svc"))
      expect(ready.bootstrapKey).toMatch(/^svco_/)
      expect(ready.demo).toEqual({ knowledgebaseId: expect.any(String), agentId: expect.any(String), flowId: expect.any(String), appId: expect.any(String), created: true })
    })

    it("`svc mcp` serves a member's personal key over stdio to the MCP SDK's client", async () => {
      run(svcBin(), ["members", "add", "--email", "desk@example.com", "--role", "member", "--json"], project, projectEnv())
      const made = JSON.parse(run(svcBin(), ["keys", "create", "--name", "desk", "--all-scopes", "--personal", "--member", "desk@example.com", "--json"], project, projectEnv()))
      const transport = new StdioClientTransport({ command: svcBin(), args: ["mcp"], cwd: project, env: { PATH: process.env.PATH ?? "", SVC_API_KEY: made.key.secret }, stderr: "pipe" })
      const client = new Client({ name: "package-test", version: "1.0.0" })
      await client.connect(transport)
      try {
        const tools = (await client.listTools()).tools.map((tool) => tool.name)
        expect(tools).toContain("search_knowledgebase")
        const who = await client.callTool({ name: "whoami", arguments: {} })
        expect(JSON.stringify(who.content)).toContain("desk@example.com")
      } finally {
        await client.close()
      }
    })

    it("the README's SDK snippet compiles under tsc --strict in the project and runs against the server", () => {
      writeFileSync(join(project, "snippet.ts"), readmeSdkSnippet())
      writeFileSync(
        join(project, "tsconfig.json"),
        JSON.stringify({ compilerOptions: { strict: true, target: "es2022", module: "nodenext", moduleResolution: "nodenext", types: ["node"], outDir: "out" }, files: ["snippet.ts"] })
      )
      run(process.execPath, [join(project, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], project)
      const output = run(process.execPath, [join(project, "out", "snippet.js")], project, projectEnv({ SVC_BASE_URL: ready.baseUrl, SVC_API_KEY: ready.bootstrapKey, SVC_AGENT_ID: ready.demo.agentId }))
      expect(output).toContain("Handbook")
      expect(output).toContain("not_found")
      expect(output).toMatch(/30 days/)
    })
  })
})
