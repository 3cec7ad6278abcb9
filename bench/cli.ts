/**
 * `npm run bench:cli`: the start-up of the `svc` command, whole processes timed from outside.
 *
 * It prepares a data directory (`svc serve --port 0 --json` on a temporary directory until it
 * answers with its addresses, then stopped), then runs each command below `--runs` times as its
 * own process, in turns (every command once, then again, ...) after one warm-up turn that is not
 * counted, and prints the wall time and the CPU time (user + system, the operating system's
 * accounting of the finished child, read by bash's `time`) of each as min, median and max, then
 * the same figures as one JSON line. `node -e 0` is the floor: Node's own start-up. It measures
 * and never judges: no thresholds.
 *
 *   node dist/bench/cli.js [--runs 10] [--svc bin/svc.js] [--keep-data]
 *
 * `--svc FILE` times another build of the command (another checkout's `bin/svc.js`).
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { waitForQuiet } from "./children.js"
import { fmt, table } from "./report.js"

const { values: flags } = parseArgs({
  options: {
    runs: { type: "string", default: "10" },
    svc: { type: "string" },
    "keep-data": { type: "boolean", default: false }
  }
})

const runs = Number(flags.runs)
if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs must be a whole number of at least 1")
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const svc = resolve(flags.svc ?? join(repoRoot, "bin", "svc.js"))

/** One command timed: its label and its argv (run without a shell, its output thrown away). */
interface TimedCommand {
  readonly label: string
  readonly argv: ReadonlyArray<string>
}

/** Wall and CPU milliseconds of one finished run. */
interface Sample {
  readonly wallMs: number
  readonly cpuMs: number
}

/** Min, median and max of a list of numbers. */
interface Spread {
  readonly min: number
  readonly median: number
  readonly max: number
}

const spreadOf = (values: ReadonlyArray<number>): Spread => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length / 2
  const median = sorted.length % 2 === 1 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2
  return { min: sorted[0]!, median, max: sorted[sorted.length - 1]! }
}

/**
 * Runs `argv` once under bash's `time` keyword, which reads the child's user and system time from
 * the kernel's accounting of the waited-for process (getrusage of the shell's children) and its
 * wall time from the clock. A run that does not exit 0 fails the benchmark with its reason.
 */
const timeOnce = (command: TimedCommand): Sample => {
  const script = 'TIMEFORMAT="%3R %3U %3S"; { time "$@" >/dev/null 2>/dev/null; } 2>&1; echo "exit $?"'
  const result = spawnSync("bash", ["-c", script, "bash", ...command.argv], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
  const lines = result.stdout.trim().split("\n")
  const exit = /^exit (\d+)$/.exec(lines.at(-1) ?? "")
  const times = /^(\d+\.\d+) (\d+\.\d+) (\d+\.\d+)$/.exec(lines.at(-2) ?? "")
  if (exit === null || times === null) throw new Error(`${command.label}: could not read its times from ${JSON.stringify(result.stdout)} ${result.stderr}`)
  if (exit[1] !== "0") throw new Error(`${command.label}: exited ${exit[1]} (${command.argv.join(" ")})`)
  return { wallMs: Math.round(Number(times[1]) * 1000), cpuMs: Math.round((Number(times[2]) + Number(times[3])) * 1000) }
}

/** Starts `svc serve --port 0 --json` on `dataDir` until it prints its addresses (the data directory made), then stops it. */
const prepareDataDir = async (dataDir: string): Promise<void> => {
  const child = spawn(process.execPath, [svc, "serve", "--port", "0", "--json", "--data-dir", dataDir], { stdio: ["ignore", "pipe", "pipe"] })
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4_000)
  })
  const exited = new Promise<void>((done) => child.once("exit", () => done()))
  try {
    await new Promise<void>((ready, fail) => {
      const timer = setTimeout(() => fail(new Error(`svc serve did not start within 60 s\n${stderr}`)), 60_000)
      createInterface({ input: child.stdout }).on("line", (line) => {
        if (line.includes('"baseUrl"')) {
          clearTimeout(timer)
          ready()
        }
      })
      child.once("exit", (code) => {
        clearTimeout(timer)
        fail(new Error(`svc serve exited (${code}) before it started\n${stderr}`))
      })
    })
  } finally {
    child.kill("SIGTERM")
    await exited
  }
}

const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-cli-"))
try {
  await prepareDataDir(dataDir)
  const commands: ReadonlyArray<TimedCommand> = [
    { label: "node -e 0 (floor)", argv: [process.execPath, "-e", "0"] },
    { label: "svc --version", argv: [process.execPath, svc, "--version"] },
    { label: "svc --help", argv: [process.execPath, svc, "--help"] },
    { label: "svc orgs show default --json", argv: [process.execPath, svc, "orgs", "show", "default", "--json", "--data-dir", dataDir] },
    { label: "svc keys list --org default --json", argv: [process.execPath, svc, "keys", "list", "--org", "default", "--json", "--data-dir", dataDir] }
  ]
  const busyCores = await waitForQuiet(15_000)
  const samples = commands.map((): Array<Sample> => [])
  for (let turn = 0; turn <= runs; turn++) {
    commands.forEach((command, i) => {
      const sample = timeOnce(command)
      // Turn 0 is the warm-up (the file system cache, the first compile of each native module).
      if (turn > 0) samples[i]!.push(sample)
    })
  }
  const results = commands.map((command, i) => ({
    command: command.label,
    wallMs: spreadOf(samples[i]!.map((s) => s.wallMs)),
    cpuMs: spreadOf(samples[i]!.map((s) => s.cpuMs))
  }))
  console.log(`svc: ${svc}; ${runs} runs each after one warm-up; machine busy before: ${busyCores ?? "?"} cores (other processes)`)
  console.log(
    table(
      ["command", "wall min ms", "median", "max", "cpu min ms", "median", "max"],
      results.map((r) => [r.command, fmt(r.wallMs.min, 0), fmt(r.wallMs.median, 0), fmt(r.wallMs.max, 0), fmt(r.cpuMs.min, 0), fmt(r.cpuMs.median, 0), fmt(r.cpuMs.max, 0)])
    )
  )
  console.log(JSON.stringify({ bench: "cli", svc, runs, busyCores, results }))
} finally {
  if (flags["keep-data"]) console.error(`data directory kept: ${dataDir}`)
  else rmSync(dataDir, { recursive: true, force: true })
}
