/**
 * What every benchmark launcher (the svc child process) does to end: close the server cleanly on
 * SIGTERM, SIGINT or when its stdin (the benchmark's pipe) closes, forcing an exit after 5 s.
 */

/** Stops `server` (and the process) on the first of those signals; stdin is left flowing. */
export const stopOnSignals = (server: { readonly close: () => Promise<void> }): void => {
  let stopping = false
  const stop = () => {
    if (stopping) return
    stopping = true
    setTimeout(() => process.exit(1), 5_000).unref()
    server.close().then(
      () => process.exit(0),
      () => process.exit(1)
    )
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
  process.stdin.on("end", stop)
  process.stdin.on("error", stop)
  process.stdin.resume()
}
