/**
 * Summarizes a V8 `.cpuprofile` (from `node --cpu-prof`): top functions by self time, and self
 * time by package (each `node_modules` package, svc's own code, Node internals, GC).
 *
 *   node dist/bench/profile-summary.js <file.cpuprofile> [top]
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
  readonly columnNumber: number
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
}

interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

/** Self time of one function or package. */
export interface SelfTime {
  readonly name: string
  readonly ms: number
  /** Percent of the busy (non-idle) time. */
  readonly percent: number
}

export interface ProfileSummary {
  readonly totalMs: number
  readonly idleMs: number
  readonly busyMs: number
  readonly functions: ReadonlyArray<SelfTime>
  readonly packages: ReadonlyArray<SelfTime>
}

const shortUrl = (url: string): string => {
  const modules = url.lastIndexOf("node_modules/")
  if (modules !== -1) return url.slice(modules + "node_modules/".length)
  const dist = url.indexOf("/dist/")
  if (dist !== -1) return url.slice(dist + 1)
  return url.replace(/^file:\/\//, "")
}

const packageOf = (frame: CallFrame): string => {
  const { url, functionName } = frame
  if (url === "") {
    if (functionName === "(garbage collector)") return "(garbage collector)"
    if (functionName === "(idle)") return "(idle)"
    if (functionName === "(program)") return "(program: V8/native, unattributed)"
    return "(native)"
  }
  if (url.startsWith("node:")) return "node internals"
  const modules = url.lastIndexOf("node_modules/")
  if (modules !== -1) {
    const parts = url.slice(modules + "node_modules/".length).split("/")
    return parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1] ?? ""}` : (parts[0] ?? url)
  }
  if (url.includes("/dist/server/")) return "svc server code"
  if (url.includes("/dist/bench/")) return "svc bench launcher"
  return url
}

const sortTimes = (times: Map<string, number>, busyMs: number, top: number): Array<SelfTime> =>
  [...times]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({
      name,
      ms: Number((us / 1000).toFixed(1)),
      percent: Number(((us / 1000 / busyMs) * 100).toFixed(1))
    }))

/** Reads and summarizes a `.cpuprofile`. */
export const summarizeProfile = (file: string, top = 25): ProfileSummary => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfUs = new Map<number, number>()
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!
    // the time until the next sample is spent where this sample was taken
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0))
  }
  const functions = new Map<string, number>()
  const packages = new Map<string, number>()
  let totalUs = 0
  let idleUs = 0
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame
    if (!frame) continue
    totalUs += us
    const pkg = packageOf(frame)
    if (pkg === "(idle)") {
      idleUs += us
      continue
    }
    const name = frame.url
      ? `${frame.functionName || "(anonymous)"}  ${shortUrl(frame.url)}:${frame.lineNumber + 1}`
      : frame.functionName
    functions.set(name, (functions.get(name) ?? 0) + us)
    packages.set(pkg, (packages.get(pkg) ?? 0) + us)
  }
  const busyMs = (totalUs - idleUs) / 1000
  return {
    totalMs: Number((totalUs / 1000).toFixed(1)),
    idleMs: Number((idleUs / 1000).toFixed(1)),
    busyMs: Number(busyMs.toFixed(1)),
    functions: sortTimes(functions, busyMs, top),
    packages: sortTimes(packages, busyMs, top)
  }
}

/** The summary as text. */
export const formatProfile = (summary: ProfileSummary): string => {
  const lines = [
    `profile: ${summary.totalMs} ms sampled, ${summary.idleMs} ms idle, ${summary.busyMs} ms busy (percentages are of busy time)`,
    "",
    "self time by package:",
    ...summary.packages.map((p) => `  ${p.percent.toFixed(1).padStart(5)}%  ${p.ms.toFixed(0).padStart(7)} ms  ${p.name}`),
    "",
    "top functions by self time:",
    ...summary.functions.map((f) => `  ${f.percent.toFixed(1).padStart(5)}%  ${f.ms.toFixed(0).padStart(7)} ms  ${f.name}`)
  ]
  return lines.join("\n")
}

/**
 * Summarizes the CPU profile the server wrote into `profileDir` (after it exited cleanly), prints
 * it and saves it as `summaryFile`; null when no profile was written.
 */
export const reportProfile = (profileDir: string, summaryFile: string): string | null => {
  const file = readdirSync(profileDir).find((f) => f.endsWith(".cpuprofile"))
  if (!file) {
    console.log("\nno CPU profile was written (did the svc server exit cleanly?)")
    return null
  }
  const profile = formatProfile(summarizeProfile(join(profileDir, file), 30))
  writeFileSync(summaryFile, `${profile}\n`)
  console.log(`\nsvc CPU profile (${join(profileDir, file)}):\n${profile}`)
  return profile
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2]
  if (!file) {
    console.error("usage: node dist/bench/profile-summary.js <file.cpuprofile> [top]")
    process.exit(2)
  }
  console.log(formatProfile(summarizeProfile(file, Number(process.argv[3] ?? 25))))
}
