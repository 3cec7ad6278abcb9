/**
 * The README is true (issue 20):
 *
 * - Links: every relative link and image of README.md, sdk/README.md and docs/*.md names a file
 *   inside the repository that exists (a clone has no `../shared`).
 * - The spec's copy: docs/spec/ is byte for byte `../shared/spec/` wherever that exists (CI keeps a
 *   copy of shared/ beside the clone).
 * - The shell blocks: a real `svc serve --demo --json` (the built CLI, a spawned process) on a fresh
 *   SQLite data directory, then every ` ```sh ` block not marked `<!-- readme-test: skip (why) -->`
 *   run by one bash, in order, each command on its own, so the shell variables a block sets carry
 *   on as they do in a reader's terminal. They run in a temporary project that has svc installed
 *   the way `npm install svc-local` installs it (`node_modules/svc-local` and
 *   `node_modules/.bin/svc`, here links to this checkout), with its data directory at `./.svc`, so
 *   `npx svc` runs this checkout and the files the tour writes stay out of the repository. Every
 *   command must exit 0, and the output shown in the comment under a command must be printed
 *   (stdout and stderr; `…` stands for what differs from run to run; see `shownFragments`).
 *
 * The README keeps three placeholders a reader replaces, swapped here for this run's values: the
 * address `http://127.0.0.1:8787` (the server's real origin), the key `svco_…` in commands (the
 * bootstrap key it printed), and the webhook receiver's port 4000 (`127.0.0.1:4000` and
 * `.listen(4000)`: a free port).
 *
 * SQLite only (vitest.config.ts, `sqliteItself`): the README's tour runs on the SQLite file it
 * describes, and `svc reset` and `--ephemeral` are SQLite-only; one run takes minutes.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, isAbsolute, join, relative, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseOneDocument, repoRoot, type Served, serveProcess } from "../cli/helpers.js"
import { fencedBlocksWithLines, markdownLinks, readme, shellBlocks, shellSteps, shownFragments, squeezeSpace } from "../support/readme.js"

/** The markdown files whose links must stay in the repository. */
const documents = (): Array<string> => [
  "README.md",
  "sdk/README.md",
  ...readdirSync(join(repoRoot, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`)
]

describe("links of the README and the docs", () => {
  it("name files inside the repository that exist", () => {
    const faults: Array<string> = []
    let checked = 0
    for (const document of documents()) {
      for (const { line, target } of markdownLinks(readFileSync(join(repoRoot, document), "utf8"))) {
        if (/^(https?|mailto):/i.test(target) || target.startsWith("#")) continue
        const where = `${document}:${line} ${target}`
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) {
          faults.push(`${where}: not a file of the repository nor a web address`)
          continue
        }
        checked++
        const path = decodeURIComponent(target.replace(/[?#].*$/, ""))
        const file = path.startsWith("/") ? join(repoRoot, path) : resolve(repoRoot, dirname(document), path)
        const inside = relative(repoRoot, file)
        if (inside.startsWith("..") || isAbsolute(inside)) faults.push(`${where}: leaves the repository`)
        else if (!existsSync(file)) faults.push(`${where}: no such file`)
      }
    }
    expect(faults).toEqual([])
    expect(checked).toBeGreaterThan(3)
  })
})

describe("docs/spec", () => {
  const shared = join(repoRoot, "..", "shared", "spec")
  it.skipIf(!existsSync(shared))("is byte for byte ../shared/spec", () => {
    const names = (dir: string) => readdirSync(dir).filter((name) => statSync(join(dir, name)).isFile()).sort()
    expect(names(join(repoRoot, "docs", "spec"))).toEqual(names(shared))
    for (const name of names(shared)) {
      expect(readFileSync(join(repoRoot, "docs", "spec", name)).equals(readFileSync(join(shared, name))), `docs/spec/${name}`).toBe(true)
    }
  })
})

/** A free TCP port on loopback. */
const freePort = (): Promise<number> =>
  new Promise((done, fail) => {
    const server = createServer()
    server.on("error", fail)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => done(port))
    })
  })

/** `text` as one single-quoted shell word. */
const shellWord = (text: string): string => `'${text.split("'").join("'\\''")}'`

/** One command of the README as run: where it is, what it ran, what it must print. */
interface Step {
  readonly where: string
  readonly command: string
  readonly fragments: ReadonlyArray<string>
}

/** What one command left behind. */
interface Outcome {
  readonly code: number | null
  readonly output: string
}

let project: string
let served: Served | undefined
let script: ChildProcess | undefined

afterAll(async () => {
  if (script?.pid !== undefined) {
    try {
      process.kill(-script.pid, "SIGTERM")
    } catch {
      // the script and what it started in the background are gone
    }
  }
  await served?.stop()
  if (project) rmSync(project, { recursive: true, force: true })
})

describe("the README's shell blocks", () => {
  let origin: string
  let key: string
  let receiverPort: number
  let steps: Array<Step>
  let outcomes: Array<Outcome>
  const blocks = shellBlocks()

  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), "svc-readme-"))
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "readme-tour", private: true, dependencies: { "svc-local": `file:${repoRoot}` } }, null, 2))
    mkdirSync(join(project, "node_modules", ".bin"), { recursive: true })
    symlinkSync(repoRoot, join(project, "node_modules", "svc-local"))
    symlinkSync(join("..", "svc-local", "bin", "svc.js"), join(project, "node_modules", ".bin", "svc"))
    served = await serveProcess(join(project, ".svc"), ["--json", "--demo"])
    const ready = parseOneDocument(served.stdout())
    expect(ready.demo).toMatchObject({ created: true })
    origin = new URL(ready.baseUrl).origin
    key = ready.bootstrapKey
    receiverPort = await freePort()
  }, 120_000)

  /** The placeholders the README keeps, replaced in commands (and, but for the key, in the output shown). */
  const inShown = (text: string) =>
    text.replaceAll("http://127.0.0.1:8787", origin).replaceAll("127.0.0.1:4000", `127.0.0.1:${receiverPort}`).replaceAll(".listen(4000)", `.listen(${receiverPort})`)
  const inCommand = (text: string) => inShown(text).replaceAll("svco_…", key)

  it("are all sh blocks (no bash, shell or console block escapes the test)", () => {
    const others = fencedBlocksWithLines(readme()).filter((block) => ["bash", "shell", "console", "zsh"].includes(block.language))
    expect(others.map((block) => `README.md:${block.line}`)).toEqual([])
  })

  it("skip only blocks that say why", () => {
    const skipped = blocks.filter((block) => block.skip !== null)
    console.log(
      `README test: ${blocks.length - skipped.length} sh blocks run, ${skipped.length} skipped:\n` +
        skipped.map((block) => `  README.md:${block.line} ${shellSteps(block.code)[0]?.command.split("\n")[0]} (${block.skip})`).join("\n")
    )
    expect(skipped.every((block) => block.skip!.length > 3)).toBe(true)
    expect(blocks.length - skipped.length).toBeGreaterThan(10)
  })

  it("have `npx svc` run this checkout's svc in a clone too (the registry's `svc` is another package)", () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }
    const env = { ...process.env, CI: "true", npm_config_yes: "false", npm_config_offline: "true", npm_config_update_notifier: "false" }
    const run = spawnSync("npx", ["svc", "--version"], { cwd: repoRoot, env, encoding: "utf8", timeout: 60_000 })
    expect(run.status, run.stderr).toBe(0)
    expect(run.stdout.trim()).toBe(version)
  }, 60_000)

  it("install nothing in the blocks they run (an install is marked skipped)", () => {
    const installs = blocks
      .filter((block) => block.skip === null)
      .flatMap((block) => shellSteps(block.code).map((step) => ({ where: `README.md:${block.line + step.offset}`, command: step.command })))
      .filter((step) => /\bnpm\s+(install|i|ci|add)\b|\bnpx\s+(--yes|-y)\b/.test(step.command))
    expect(installs.map((step) => `${step.where}: ${step.command}`)).toEqual([])
  })

  it("run in order, each command exiting 0 and printing what the README shows under it", async () => {
    steps = blocks
      .filter((block) => block.skip === null)
      .flatMap((block) =>
        shellSteps(block.code).map((step) => ({
          where: `README.md:${block.line + step.offset}`,
          command: inCommand(step.command),
          fragments: shownFragments(step.shown.map(inShown))
        }))
      )
    const out = join(project, ".readme-run")
    mkdirSync(out)
    const lines = ["set -o pipefail", `OUT=${shellWord(out)}`]
    steps.forEach((step, index) => {
      lines.push(`echo ${index} > "$OUT/current"`, "{", step.command, `} > "$OUT/${index}.out" 2> "$OUT/${index}.err"`)
      lines.push(`code=$?; echo $code > "$OUT/${index}.code"; [ $code -eq 0 ] || exit 90`)
    })
    writeFileSync(join(out, "tour.sh"), `${lines.join("\n")}\n`)
    // npm may reach no registry: `npx svc` must run the project's own svc.
    const env: NodeJS.ProcessEnv = { ...process.env, CI: "true", npm_config_yes: "false", npm_config_offline: "true", npm_config_update_notifier: "false" }
    for (const name of Object.keys(env)) if (name.startsWith("SVC_")) delete env[name]
    Object.assign(env, { SVC_DATA_DIR: join(project, ".svc"), SVC_BASE_URL: `${origin}/api/v1`, SVC_API_KEY: key })
    const started = Date.now()
    const exit = await new Promise<number | null>((done, fail) => {
      script = spawn("bash", [join(out, "tour.sh")], { cwd: project, env, stdio: ["ignore", "ignore", "pipe"], detached: true })
      script.on("error", fail)
      script.on("exit", (code) => done(code))
    })
    try {
      process.kill(-script!.pid!, "SIGTERM")
    } catch {
      // nothing of it left in the background
    }
    console.log(`README test: ${steps.length} commands in ${Math.round((Date.now() - started) / 1000)} s`)
    outcomes = steps.map((_, index) => {
      const file = (suffix: string) => join(out, `${index}.${suffix}`)
      if (!existsSync(file("code"))) return { code: null, output: "" }
      return {
        code: Number(readFileSync(file("code"), "utf8").trim()),
        output: `${readFileSync(file("out"), "utf8")}\n${readFileSync(file("err"), "utf8")}`
      }
    })
    const failed = outcomes.findIndex((outcome) => outcome.code !== 0)
    if (failed !== -1) {
      const step = steps[failed]!
      const outcome = outcomes[failed]!
      throw new Error(
        `${step.where}: ${outcome.code === null ? "did not run" : `exited ${outcome.code}`} (script exit ${exit}):\n${step.command}\n--- output ---\n${outcome.output}`
      )
    }
    const missing = steps.flatMap((step, index) => {
      const printed = squeezeSpace(outcomes[index]!.output)
      return step.fragments.filter((fragment) => !printed.includes(fragment)).map((fragment) => `${step.where}: shown but not printed: ${fragment}`)
    })
    if (missing.length > 0) {
      const firstMissing = steps.findIndex((step) => missing.some((line) => line.startsWith(`${step.where}:`)))
      console.log(`README test: what ${steps[firstMissing]!.where} printed:\n${outcomes[firstMissing]!.output}`)
    }
    expect(missing).toEqual([])
    expect(exit).toBe(0)
  }, 900_000)
})
