#!/usr/bin/env node
/**
 * The `prepare` script, for development in a checkout only (npm runs no `prepare` when it installs
 * the package's tarball, which already holds the built `dist/`): `npm ci` or `npm install` builds the
 * project and links the project's own `svc` command into `node_modules/.bin`, so `npx svc` in the
 * checkout runs it at once instead of installing the checkout into npx's cache (which ran this
 * script, and so the whole build, again). Under `npx`/`npm exec` it does nothing.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, rmSync, symlinkSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
if (process.env.npm_command === "exec") process.exit(0)

const build = spawnSync("npm", ["run", "build"], { cwd: root, stdio: "inherit", shell: process.platform === "win32" })
if (build.status !== 0) process.exit(build.status ?? 1)

const bin = join(root, "node_modules", ".bin")
const link = join(bin, process.platform === "win32" ? "svc.cmd" : "svc")
if (existsSync(join(root, "node_modules")) && process.platform !== "win32") {
  mkdirSync(bin, { recursive: true })
  rmSync(link, { force: true })
  symlinkSync(join("..", "..", "bin", "svc.js"), link)
}
