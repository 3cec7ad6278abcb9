/**
 * Runs the `svc` CLI on temp data directories, without a TTY and with `CI=true`: in this process
 * through `runCli` (most tests), or as the real `node bin/svc.js` child process (compiled by
 * `npm test`'s build step) for the smoke tests of serving, signals and one command of each kind.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { expect } from "vitest"
import type { CliIo } from "../../cli/io.js"
import { runCli } from "../../cli/program.js"
import { dropTestDatabase, knownTestDatabase, testDatabaseEnv, testDatabaseFor } from "../support/server.js"
import { runAdmin } from "../../server/admin.js"

/** The repository root: the CLI runs from here. */
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
const bin = join(repoRoot, "bin", "svc.js")

const dirs: Array<string> = []

/** A fresh, empty directory (a data directory with nothing in it, or a place for files), removed by `removeDataDirs`. */
export const freshDataDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "svc-cli-"))
  dirs.push(dir)
  return dir
}

/**
 * A fresh data directory whose data lives on the test's backend: on PostgreSQL it gets a database of
 * its own (empty, migrated), which every `svc` run on it is given as `SVC_DATABASE_URL`.
 */
export const backendDataDir = async (): Promise<string> => {
  const dir = freshDataDir()
  await testDatabaseFor(dir)
  return dir
}

/** A fresh data directory holding an empty database (no organization), as administration needs one. */
export const emptyDataDir = async (): Promise<string> => {
  const dir = await backendDataDir()
  await runAdmin({ dataDir: dir, database: knownTestDatabase(dir) }, Effect.void)
  return dir
}

/** Removes every directory made by `freshDataDir` and the databases of those that had one. */
export const removeDataDirs = async (): Promise<void> => {
  for (const dir of dirs.splice(0)) {
    rmSync(dir, { recursive: true, force: true })
    await dropTestDatabase(dir)
  }
}

/** What a CLI run left behind. */
export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Environment variables of a CLI run beside `SVC_DATA_DIR`, e.g. `SVC_BASE_URL` and `SVC_API_KEY`. */
export type CliEnv = Readonly<Record<string, string>>

const cliEnv = (dataDir: string | undefined, extra: CliEnv = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: "true" }
  delete env.FORCE_COLOR
  delete env.SVC_DATA_DIR
  delete env.SVC_BASE_URL
  delete env.SVC_API_KEY
  delete env.SVC_DATABASE_URL
  if (dataDir !== undefined) Object.assign(env, { SVC_DATA_DIR: dataDir }, testDatabaseEnv(dataDir))
  return { ...env, ...extra }
}

const launch = (args: ReadonlyArray<string>, dataDir: string | undefined, env?: CliEnv): ChildProcess =>
  spawn(process.execPath, [bin, ...args], { cwd: repoRoot, env: cliEnv(dataDir, env), stdio: ["ignore", "pipe", "pipe"] })

/** How long a spawned `svc` may run before it is stopped and its output reported (well under a test's timeout). */
const processDeadlineMs = 20_000

/**
 * Runs the real process `node bin/svc.js ...args` to completion (smoke tests; the others run
 * in-process). A process still running after `processDeadlineMs` is killed and the promise
 * rejects with what it printed, so a hang names itself instead of timing the test out.
 */
export const svcProcess = (args: ReadonlyArray<string>, dataDir?: string, env?: CliEnv): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = launch(args, dataDir, env)
    let stdout = ""
    let stderr = ""
    const deadline = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`svc ${args.join(" ")} still ran after ${processDeadlineMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, processDeadlineMs)
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("error", (error) => {
      clearTimeout(deadline)
      reject(error)
    })
    child.on("close", (code) => {
      clearTimeout(deadline)
      resolve({ code, stdout, stderr })
    })
  })

/** A run of the program in this process: its outside world, what it wrote, and a stop button. */
const inProcess = (dataDir: string | undefined, env: CliEnv = {}, cwd = repoRoot) => {
  let stdout = ""
  let stderr = ""
  const listeners = new Set<() => void>()
  const io: CliIo = {
    env: {
      CI: "true",
      ...(dataDir === undefined ? {} : { SVC_DATA_DIR: dataDir }),
      ...(dataDir === undefined ? {} : testDatabaseEnv(dataDir)),
      ...env
    },
    cwd,
    stdout: { write: (text) => (stdout += text), isTTY: false },
    stderr: { write: (text) => (stderr += text), isTTY: false },
    stdin: Readable.from([]),
    onStop: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    }
  }
  return {
    io,
    stdout: () => stdout,
    stderr: () => stderr,
    requestStop: () => {
      for (const listener of [...listeners]) listener()
    }
  }
}

/**
 * Runs `svc ...args` in this process through the program (as `bin/svc.js` does, without a TTY);
 * `dataDir` is passed as `SVC_DATA_DIR`, `env` added to the environment; it runs in `cwd` (default the repository).
 */
export const svc = async (args: ReadonlyArray<string>, dataDir?: string, env?: CliEnv, cwd?: string): Promise<CliResult> => {
  const run = inProcess(dataDir, env, cwd)
  const code = await runCli(args, run.io)
  return { code, stdout: run.stdout(), stderr: run.stderr() }
}

/** Parses stdout as exactly one JSON document on one line. */
export const parseOneDocument = (stdout: string): any => {
  expect(stdout.endsWith("\n")).toBe(true)
  expect(stdout.trimEnd().split("\n")).toHaveLength(1)
  return JSON.parse(stdout)
}

/** Runs `svc ...args --json`, expects success with nothing on stderr, and returns the document. */
export const svcJson = async (args: ReadonlyArray<string>, dataDir: string): Promise<any> => {
  const result = await svc([...args, "--json"], dataDir)
  expect(result.stderr).toBe("")
  expect(result.code).toBe(0)
  return parseOneDocument(result.stdout)
}

/**
 * Expects a failure: `code`, one `svc: ...` line on stderr, and on stdout nothing (or, with `json`,
 * only the error envelope). Returns the stderr line.
 */
export const expectFailure = (result: CliResult, code: 1 | 2, json = false): string => {
  expect(result.code).toBe(code)
  if (json) expectEnvelope(result.stdout)
  else expect(result.stdout).toBe("")
  const lines = result.stderr.trimEnd().split("\n")
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(/^svc: \S/)
  return lines[0]!
}

/** Expects stdout to be exactly the error envelope `{"error":{"code","message"}}`; returns its error. */
export const expectEnvelope = (stdout: string): { code: string; message: string } => {
  const document = parseOneDocument(stdout)
  expect(Object.keys(document)).toEqual(["error"])
  expect(Object.keys(document.error)).toEqual(["code", "message"])
  expect(document.error.code).toMatch(/^[a-z]+(_[a-z]+)*$/)
  expect(document.error.message).toEqual(expect.stringMatching(/\S/))
  return document.error
}

/** A CLI command left running in this process (like `svc changes tail`), its output collected as it comes. */
export interface Running {
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves once stdout satisfies `test` (rejects if the command ends first). */
  readonly waitFor: (test: (stdout: string) => boolean) => Promise<void>
  /** Asks the command to stop (as SIGINT or SIGTERM do) and resolves with what the run left behind. */
  readonly stop: () => Promise<CliResult>
}

/** Starts `svc ...args` in this process and leaves it running. */
export const start = (args: ReadonlyArray<string>, dataDir?: string, env?: CliEnv): Running => {
  const run = inProcess(dataDir, env)
  let ended = false
  const exited = runCli(args, run.io).then((code) => {
    ended = true
    return { code, stdout: run.stdout(), stderr: run.stderr() }
  })
  const waitFor = async (test: (stdout: string) => boolean) => {
    while (!test(run.stdout())) {
      if (ended) throw new Error(`the command ended first: ${run.stderr()}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  return {
    stdout: run.stdout,
    stderr: run.stderr,
    waitFor,
    stop: () => {
      run.requestStop()
      return exited
    }
  }
}

/** A real `svc` process left running, its output collected as it comes. */
export interface RunningProcess extends Omit<Running, "stop"> {
  readonly child: ChildProcess
  /** Sends `signal` (default SIGTERM) and resolves with what the run left behind. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<CliResult>
}

/** Starts the real process `node bin/svc.js ...args` and leaves it running. */
export const startProcess = (args: ReadonlyArray<string>, dataDir?: string, env?: CliEnv): RunningProcess => {
  const child = launch(args, dataDir, env)
  let stdout = ""
  let stderr = ""
  const watchers = new Set<() => void>()
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString()
    for (const watch of watchers) watch()
  })
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<CliResult>((done) => child.on("close", (code) => done({ code, stdout, stderr })))
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor: (test) =>
      new Promise((resolve, reject) => {
        const watch = () => {
          if (!test(stdout)) return
          watchers.delete(watch)
          resolve()
        }
        watchers.add(watch)
        watch()
        void exited.then(() => {
          if (watchers.delete(watch)) reject(new Error(`the command exited first: ${stderr}`))
        })
      }),
    stop: (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    }
  }
}

/** Matches any ANSI escape sequence. */
export const ansi = /\u001b\[/

/** A running `svc serve` process. */
export interface Served {
  readonly child: ChildProcess
  /** stdout up to the moment the server was ready. */
  readonly stdout: () => string
  readonly stderr: () => string
  /** Sends `signal` and resolves with the exit code. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
  /** Resolves with the exit code once the process exits by itself. */
  readonly exited: () => Promise<number | null>
}

const isReady = (stdout: string, readyWhen: string | RegExp) =>
  typeof readyWhen === "string" ? stdout.includes(readyWhen) : readyWhen.test(stdout)

/** A `svc serve` running in this process. */
export interface ServedInProcess {
  /** stdout so far (the ready line or banner). */
  readonly stdout: () => string
  readonly stderr: () => string
  /** Asks it to stop (as SIGINT or SIGTERM do) and resolves with the exit code. */
  readonly stop: () => Promise<number | null>
}

/** Runs `svc serve --port 0 ...args` in this process and resolves once stdout contains `readyWhen`. */
export const serve = async (dataDir: string, args: ReadonlyArray<string>, readyWhen: string | RegExp = "\n"): Promise<ServedInProcess> => {
  const run = start(["serve", "--port", "0", ...args], dataDir)
  await run.waitFor((stdout) => isReady(stdout, readyWhen))
  return { stdout: run.stdout, stderr: run.stderr, stop: async () => (await run.stop()).code }
}

/** Starts the real process `svc serve --port 0 ...args` and resolves once stdout contains `readyWhen`. */
export const serveProcess = (dataDir: string, args: ReadonlyArray<string>, readyWhen: string | RegExp = "\n"): Promise<Served> =>
  new Promise((resolve, reject) => {
    const child = launch(["serve", "--port", "0", ...args], dataDir)
    let stdout = ""
    let stderr = ""
    let ready = false
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
    const served: Served = {
      child,
      stdout: () => stdout,
      stderr: () => stderr,
      stop: (signal = "SIGTERM") => {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal)
        return exited
      },
      exited: () => exited
    }
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      if (!ready && isReady(stdout, readyWhen)) {
        ready = true
        resolve(served)
      }
    })
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("error", reject)
    void exited.then((code) => {
      if (!ready) reject(new Error(`svc serve exited with ${code} before it was ready: ${stderr}`))
    })
  })

/** Sends a GET to the API with a bearer key. */
export const apiGet = async (baseUrl: string, path: string, key: string): Promise<{ status: number; body: any }> => {
  const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : undefined }
}

/** Suite options for tests that spawn the CLI many times (each run starts a Node process). */
export const slow = { timeout: 120_000 } as const
