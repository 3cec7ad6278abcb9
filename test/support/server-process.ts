/**
 * A server in a child process of its own (the compiled `dist/`, so `npm run build` first), started
 * with `startServer` options as `svc serve` would run it, for tests that kill a process outright
 * (SIGKILL: no finalizer, no clean shutdown) while other instances share its database.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { ServerOptions } from "../../server/server.js"

/** The repository root, whose `dist/` the child runs. */
const repoRoot = fileURLToPath(new URL("../..", import.meta.url))

/** What the child runs: `startServer` with the options in `SVC_CHILD_OPTIONS`, then one ready line. */
const childScript = `
const { startServer } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, "dist", "server", "server.js")).href)})
const server = await startServer({ ...JSON.parse(process.env.SVC_CHILD_OPTIONS), port: 0 })
process.stdout.write(JSON.stringify({ baseUrl: server.baseUrl }) + "\\n")
`

/** One JSON request with a bearer key to a server at `baseUrl`: its status and parsed body. */
export const jsonRequest = async (baseUrl: string, key: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined }
}

/** A server running in a child process. */
export interface ServerProcess {
  readonly child: ChildProcess
  readonly pid: number
  readonly baseUrl: string
  /** Sends a request with `key`; `body` objects go as JSON. */
  readonly request: (method: string, path: string, key: string, body?: unknown) => Promise<{ status: number; body: any }>
  /** SIGKILL, resolved once the process is gone. */
  readonly kill: () => Promise<void>
}

/** Starts a server process with `options` (JSON-serializable: no clock, no functions); resolves once it listens. */
export const startServerProcess = (options: Omit<ServerOptions, "port" | "now">): Promise<ServerProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", childScript], {
      cwd: repoRoot,
      env: { ...process.env, SVC_CHILD_OPTIONS: JSON.stringify(options) },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const exited = new Promise<void>((done) => child.once("exit", () => done()))
    let stdout = ""
    let stderr = ""
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      if (!stdout.includes("\n")) return
      const { baseUrl } = JSON.parse(stdout.split("\n")[0]!) as { baseUrl: string }
      resolve({
        child,
        pid: child.pid!,
        baseUrl,
        request: (method, path, key, body) => jsonRequest(baseUrl, key, method, path, body),
        kill: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
          await exited
        }
      })
    })
    child.on("error", reject)
    void exited.then(() => reject(new Error(`the server process exited before it was ready: ${stderr}`)))
  })
