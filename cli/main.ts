/**
 * Entry point of the `svc` command (bin/svc.js imports its bundle): runs the program on the real
 * process and exits with its code. The first SIGINT or SIGTERM asks the running command to stop;
 * a second one quits at once with 130. `svc --version` is answered before the program (every
 * command's definition) loads.
 */
import module from "node:module"
import type { CliIo } from "./io.js"
import { asksOnlyForVersion, packageVersion } from "./version.js"

// Node 22.1 and later keep the compiled modules on disk, so later starts skip compiling the chunks a
// command loads; Node 20 has no such cache (docs/performance.md, "CLI start-up").
;(module as { enableCompileCache?: () => unknown }).enableCompileCache?.()

if (asksOnlyForVersion(process.argv.slice(2))) {
  process.stdout.write(`${packageVersion()}\n`)
  process.exit(0)
}

const { runCli } = await import("./program.js")

/** Stop requests from SIGINT and SIGTERM, with handlers installed only while a command listens. */
const signalStops = (): CliIo["onStop"] => {
  const listeners = new Set<() => void>()
  let signalled = false
  const onSignal = () => {
    if (signalled) process.exit(130)
    signalled = true
    for (const listener of [...listeners]) listener()
  }
  return (listener) => {
    if (listeners.size === 0) {
      process.on("SIGINT", onSignal)
      process.on("SIGTERM", onSignal)
    }
    listeners.add(listener)
    return () => {
      if (!listeners.delete(listener) || listeners.size > 0) return
      process.off("SIGINT", onSignal)
      process.off("SIGTERM", onSignal)
    }
  }
}

process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0)
})

const code = await runCli(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  stdout: process.stdout,
  stderr: process.stderr,
  get stdin() {
    return process.stdin
  },
  onStop: signalStops()
})
// Exits once what was written has been flushed (pipes are asynchronous on some systems), even if
// something the command used still holds the event loop.
process.exitCode = code
process.stdout.write("", () => process.stderr.write("", () => process.exit(code)))
