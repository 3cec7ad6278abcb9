/**
 * The version `svc --version` prints: the `version` of the package's own `package.json`, the first
 * one above this module (from `dist/cli/`, or from the bundle in `dist/cli-bundle/` or its `chunks/`).
 * Loaded at start-up, so it needs only Node's own modules.
 */
import { existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** The package's version, or `0.0.0` when its `package.json` cannot be read. */
export const packageVersion = (): string => {
  try {
    for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
      const file = join(dir, "package.json")
      if (existsSync(file)) {
        const pkg = JSON.parse(readFileSync(file, "utf8")) as { version?: unknown }
        return typeof pkg.version === "string" ? pkg.version : "0.0.0"
      }
      if (dirname(dir) === dir) return "0.0.0"
    }
  } catch {
    return "0.0.0"
  }
}

/** Whether the command line asks only for the version (`svc --version`, `svc -V`): answered before the program loads. */
export const asksOnlyForVersion = (argv: ReadonlyArray<string>): boolean => argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")
