/**
 * `svc serve --ephemeral` in a child process, the way a user starts it (`bin/svc.js`, the built
 * CLI), for the outside checkers of `npm run conformance`: its ready line read, and an Admin member
 * with a personal key made through the CLI's own admin commands (MCP takes personal keys only).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { join } from "node:path"

/** The repository root: `dist/scripts/conformance/` is three levels below it. */
export const repoRoot = join(import.meta.dirname, "..", "..", "..")

/** The `svc` command of this checkout. */
export const svcBin = join(repoRoot, "bin", "svc.js")

/** A running `svc serve` and the keys the checks use. */
export interface SvcProcess {
  /** `http://127.0.0.1:PORT`. */
  readonly origin: string
  readonly mcpUrl: string
  readonly openApiUrl: string
  readonly dataDir: string
  /** The organization key `svc serve` printed on its first start. */
  readonly organizationKey: string
  /** A personal key of an Admin member, for MCP. */
  readonly personalKey: string
  readonly stop: () => Promise<void>
}

interface ReadyLine {
  readonly baseUrl: string
  readonly mcpUrl: string
  readonly dataDir: string
  readonly bootstrapKey: string | null
}

const readyLine = (child: ChildProcess): Promise<ReadyLine> =>
  new Promise((resolve, reject) => {
    let stdout = ""
    let stderr = ""
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      const newline = stdout.indexOf("\n")
      if (newline >= 0) resolve(JSON.parse(stdout.slice(0, newline)) as ReadyLine)
    })
    child.once("exit", (code) => reject(new Error(`svc serve exited (${code}) before it was ready: ${stderr}`)))
  })

/** Runs an admin command of `svc` on `dataDir` and answers its stdout. */
const svc = (dataDir: string, args: ReadonlyArray<string>): string =>
  execFileSync(process.execPath, [svcBin, ...args, "--data-dir", dataDir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

/**
 * Starts `svc serve --ephemeral --port 0 --json --quiet` with `--rate-limit` raised (the checkers
 * send hundreds of requests a minute with one key) and makes the personal key.
 */
export const startSvc = async (extraArgs: ReadonlyArray<string> = []): Promise<SvcProcess> => {
  const child = spawn(
    process.execPath,
    [svcBin, "serve", "--ephemeral", "--port", "0", "--json", "--quiet", "--rate-limit", "100000", ...extraArgs],
    { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] }
  )
  const exited = new Promise<void>((done) => child.once("exit", () => done()))
  const ready = await readyLine(child)
  const origin = new URL(ready.baseUrl).origin
  svc(ready.dataDir, ["members", "add", "--org", "default", "--email", "conformance@svc.local", "--role", "admin"])
  const created = JSON.parse(
    svc(ready.dataDir, ["keys", "create", "--org", "default", "--name", "conformance", "--all-scopes", "--personal", "--member", "conformance@svc.local", "--json"])
  ) as { key: { secret: string } }
  return {
    origin,
    mcpUrl: ready.mcpUrl,
    openApiUrl: `${ready.baseUrl}/openapi.json`,
    dataDir: ready.dataDir,
    organizationKey: ready.bootstrapKey!,
    personalKey: created.key.secret,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT")
      await exited
    }
  }
}
