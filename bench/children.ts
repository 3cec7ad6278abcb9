/**
 * Child processes of the benchmark: spawned (pinned to a CPU when `taskset` exists), awaited until
 * they print their JSON ready line, measured through /proc, and always stopped.
 */
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process"
import { createWriteStream, mkdirSync, readFileSync, rmSync } from "node:fs"
import { availableParallelism, cpus, loadavg } from "node:os"
import { dirname, join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import type { Ready } from "./protocol.js"

/** Whether `taskset` (util-linux) is available for CPU pinning. */
export const hasTaskset = (): boolean => {
  try {
    execFileSync("taskset", ["-V"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/** Pins every thread of process `pid` to `cpu`; false when that is not possible. */
export const pinProcess = (pid: number, cpu: number): boolean => {
  try {
    execFileSync("taskset", ["-a", "-cp", String(cpu), String(pid)], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/** Clock ticks per second of /proc/<pid>/stat times. */
const clockTicks = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
  } catch {
    return 100
  }
})()

/** A running child process that printed its ready line. */
export interface Child<R extends Ready> {
  readonly name: string
  readonly process: ChildProcessWithoutNullStreams
  readonly ready: R
  /** The last few KB of its stderr. */
  readonly stderrTail: () => string
  /** Stops it (SIGTERM, then SIGKILL after `graceMs`) and resolves with its exit code or signal. */
  readonly stop: (graceMs?: number) => Promise<string>
}

export interface SpawnOptions {
  readonly name: string
  readonly script: string
  readonly args: ReadonlyArray<string>
  readonly nodeFlags?: ReadonlyArray<string>
  /** Pin to this CPU with taskset. */
  readonly cpu?: number | undefined
  /** File that receives the child's stderr. */
  readonly logFile: string
  readonly readyTimeoutMs?: number
}

const exited = (child: ChildProcessWithoutNullStreams): Promise<string> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(String(child.exitCode ?? child.signalCode))
    : new Promise((resolve) => child.once("exit", (code, signal) => resolve(String(code ?? signal))))

/** Spawns `node <script>` and waits for its ready line. */
export const spawnChild = async <R extends Ready>(options: SpawnOptions): Promise<Child<R>> => {
  const nodeArgs = [...(options.nodeFlags ?? []), options.script, ...options.args]
  const child =
    options.cpu === undefined
      ? spawn(process.execPath, nodeArgs, { stdio: ["pipe", "pipe", "pipe"] })
      : spawn("taskset", ["-c", String(options.cpu), process.execPath, ...nodeArgs], { stdio: ["pipe", "pipe", "pipe"] })
  const log = createWriteStream(options.logFile)
  let tail = ""
  child.stderr.on("data", (chunk: Buffer) => {
    log.write(chunk)
    tail = (tail + chunk.toString("utf8")).slice(-4_000)
  })
  child.stdin.on("error", () => {})

  const stop = async (graceMs = 5_000): Promise<string> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs)
      const outcome = await exited(child)
      clearTimeout(timer)
      log.end()
      return outcome
    }
    log.end()
    return exited(child)
  }

  try {
    const ready = await new Promise<R>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout })
      const timer = setTimeout(
        () => reject(new Error(`${options.name}: no ready line within ${options.readyTimeoutMs ?? 30_000} ms\n${tail}`)),
        options.readyTimeoutMs ?? 30_000
      )
      lines.on("line", (line) => {
        try {
          const parsed = JSON.parse(line) as Partial<R>
          if (parsed.ready === true) {
            clearTimeout(timer)
            resolve(parsed as R)
          }
        } catch {
          // not the ready line
        }
      })
      child.once("exit", (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`${options.name} exited (${code ?? signal}) before it was ready\n${tail}`))
      })
      child.once("error", (error) => {
        clearTimeout(timer)
        reject(error)
      })
    })
    return { name: options.name, process: child, ready, stderrTail: () => tail, stop }
  } catch (error) {
    await stop(1_000)
    throw error
  }
}

/** A field of /proc/<pid>/status in kB (e.g. `VmHWM`, peak RSS), or null off Linux. */
export const procStatusKb = (pid: number, field: string): number | null => {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match ? Number(match[1]) : null
  } catch {
    return null
  }
}

/** CPU time (user + system) of process `pid` so far, in ms, or null off Linux. */
export const procCpuMs = (pid: number): number | null => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // fields[0] is field 3 (state): utime is field 14, stime field 15
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks
  } catch {
    return null
  }
}

/** Busy CPU time of the whole machine so far (all CPUs, ms), or null off Linux. */
export const machineBusyCpuMs = (): number | null => {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? ""
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number)
    return ((user + nice + system + irq + softirq + steal) * 1000) / clockTicks
  } catch {
    return null
  }
}

/**
 * Waits (at most `maxWaitMs`) until the rest of the machine is quiet: under `thresholdCores` of
 * busy CPU over one second, measured while the benchmark itself is idle. Resolves with the last
 * measurement (cores), or null off Linux.
 */
export const waitForQuiet = async (maxWaitMs: number, thresholdCores = 0.25): Promise<number | null> => {
  const deadline = Date.now() + maxWaitMs
  for (;;) {
    const before = machineBusyCpuMs()
    if (before === null) return null
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const busy = ((machineBusyCpuMs() ?? before) - before) / 1_000
    if (busy < thresholdCores || Date.now() >= deadline) return Number(busy.toFixed(2))
  }
}

/** Busy fraction of each CPU over `ms` milliseconds (empty off Linux). */
export const perCpuBusy = async (ms: number): Promise<Array<number>> => {
  const read = (): Array<[number, number]> => {
    try {
      return readFileSync("/proc/stat", "utf8")
        .split("\n")
        .filter((line) => /^cpu\d+ /.test(line))
        .map((line) => {
          const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
            .trim()
            .split(/\s+/)
            .slice(1)
            .map(Number)
          const busy = user + nice + system + irq + softirq + steal
          return [busy, busy + idle + iowait]
        })
    } catch {
      return []
    }
  }
  const before = read()
  await new Promise((resolve) => setTimeout(resolve, ms))
  const after = read()
  return after.map(([busy, total], i) => {
    const [busy0 = busy, total0 = total] = before[i] ?? []
    return total === total0 ? 0 : Number(((busy - busy0) / (total - total0)).toFixed(2))
  })
}

/**
 * The clean-up of a benchmark run: stops every child in `children` and removes the data directory
 * (unless kept); also run on SIGINT/SIGTERM, which then exit with 130.
 */
export const cleanupOnExit = (
  children: Array<{ stop: () => Promise<unknown> }>,
  dataDir: () => string | null,
  keepData: boolean,
  what: string
): (() => Promise<void>) => {
  const cleanup = async (): Promise<void> => {
    await Promise.all(children.splice(0).map((child) => child.stop().catch(() => "")))
    const dir = dataDir()
    if (dir && !keepData) rmSync(dir, { recursive: true, force: true })
  }
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      console.error(`\n${signal}: stopping ${what}`)
      void cleanup().finally(() => process.exit(130))
    })
  }
  return cleanup
}

/**
 * Runs a benchmark's `main` and exits with its code; on a throw, prints it and the children's
 * stderr tails, cleans up and exits with 2.
 */
export const runBenchmark = (
  main: () => Promise<number>,
  children: ReadonlyArray<{ readonly name: string; readonly stderrTail: () => string }>,
  cleanup: () => Promise<void>
): void => {
  main().then(
    (code) => process.exit(code),
    async (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : error)
      for (const child of children) console.error(`--- ${child.name} stderr (tail) ---\n${child.stderrTail()}`)
      await cleanup()
      process.exit(2)
    }
  )
}

/** Where a two-process benchmark runs: the server on the quieter core, this process on the other. */
export interface CpuPlan {
  readonly cores: number
  readonly busyBefore: ReadonlyArray<number>
  readonly pinned: boolean
  /** The server's CPU when pinned. */
  readonly serverCpu: number | undefined
  /** One line describing the machine and the plan, for the report's header. */
  readonly describe: (bench: string, roles: { readonly server: string; readonly runner: string }) => string
  /** The machine and the plan for the JSON results, the two CPUs under the given names. */
  readonly json: (serverKey: string, runnerKey: string) => Record<string, unknown>
}

/** Measures each CPU's load for half a second, then pins this process away from the quietest CPU. */
export const planCpus = async (): Promise<CpuPlan> => {
  const cores = availableParallelism()
  const busyBefore = await perCpuBusy(500)
  const quietest = busyBefore.length >= 2 ? busyBefore.indexOf(Math.min(...busyBefore)) : 0
  const runnerCpu = quietest === 0 ? 1 : 0
  const pinned = cores >= 2 && hasTaskset() && pinProcess(process.pid, runnerCpu)
  const loadAverage = loadavg()[0] ?? 0
  return {
    cores,
    busyBefore,
    pinned,
    serverCpu: pinned ? quietest : undefined,
    describe: (bench, roles) =>
      `${bench}: node ${process.version}, ${cores} cores (${cpus()[0]?.model ?? "?"}), ` +
      (pinned ? `${roles.server} pinned to CPU ${quietest}, ${roles.runner} to CPU ${runnerCpu}` : "no CPU pinning") +
      ` (CPUs busy before: ${busyBefore.map((b) => b.toFixed(2)).join(", ")})` +
      `, load average ${loadAverage.toFixed(2)}` +
      (busyBefore.reduce((a, b) => a + b, 0) > 0.25 ? " (BUSY MACHINE: expect noisy figures)" : ""),
    json: (serverKey, runnerKey) => ({
      cores,
      model: cpus()[0]?.model ?? null,
      pinned: pinned ? { [serverKey]: quietest, [runnerKey]: runnerCpu } : null,
      busyBeforeStart: busyBefore,
      loadAverageAtStart: Number(loadAverage.toFixed(2))
    })
  }
}

/** Starts `svc` (the launcher next to this file) on a data directory, CPU-profiled into a fresh `profileDir` if given. */
export const launchSvc = <R extends Ready>(options: {
  readonly dataDir: string
  readonly cpu: number | undefined
  readonly logFile: string
  readonly profileDir?: string | undefined
  /** More arguments of the launcher (e.g. `--post-orgs`). */
  readonly args?: ReadonlyArray<string> | undefined
}): Promise<Child<R>> => {
  if (options.profileDir !== undefined) {
    rmSync(options.profileDir, { recursive: true, force: true })
    mkdirSync(options.profileDir, { recursive: true })
  }
  return spawnChild<R>({
    name: "svc",
    script: join(dirname(fileURLToPath(import.meta.url)), "svc-launcher.js"),
    args: ["--data-dir", options.dataDir, "--port", "0", ...(options.args ?? [])],
    nodeFlags: options.profileDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", options.profileDir],
    cpu: options.cpu,
    logFile: options.logFile
  })
}

/**
 * Writes `command` to a child's stdin and waits for its answer: the first JSON line on its stdout
 * for which `answer` gives `true` (resolve) or an `Error` (reject); other lines are passed over.
 */
export const askChild = <R extends Ready>(
  child: Child<R>,
  command: string,
  answer: (line: unknown) => true | Error | undefined,
  timeoutMs: number,
  timeoutMessage: string
): Promise<void> =>
  new Promise((resolve, reject) => {
    const stdout = child.process.stdout
    let buffer = ""
    const done = (error?: Error) => {
      clearTimeout(timer)
      stdout.off("data", onData)
      if (error) reject(error)
      else resolve()
    }
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString("utf8")
      for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
        const line = buffer.slice(0, end)
        buffer = buffer.slice(end + 1)
        let parsed: unknown
        try {
          parsed = JSON.parse(line)
        } catch {
          continue
        }
        const verdict = answer(parsed)
        if (verdict === true) return done()
        if (verdict instanceof Error) return done(verdict)
      }
    }
    const timer = setTimeout(() => done(new Error(timeoutMessage)), timeoutMs)
    stdout.on("data", onData)
    child.process.stdin.write(`${command}\n`)
  })

/**
 * Makes every `data_version` cache of a running svc launcher miss (`"missing"`) or keep its entries
 * again (`"kept"`), and resolves once the launcher says it is in effect.
 */
export const setSvcCaches = (child: Child<Ready>, mode: "missing" | "kept", timeoutMs = 5_000): Promise<void> =>
  askChild(
    child,
    `caches ${mode}`,
    (line) => ((line as { caches?: unknown } | null)?.caches === mode ? true : undefined),
    timeoutMs,
    `${child.name}: caches not ${mode} within ${timeoutMs} ms`
  )
