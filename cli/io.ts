/**
 * What one run of the program gets from outside besides its arguments: the environment, the working
 * directory, where it writes, stdin, and stop requests. `bin/svc.js` passes the real process's; tests
 * pass buffers and a stop button, and run commands in-process.
 */

/** Somewhere a run writes text: a terminal, a pipe, or a test's buffer. */
export interface CliOutput {
  readonly write: (text: string) => unknown
  /** True only for a terminal: ink renders only then. */
  readonly isTTY?: boolean | undefined
  /** A terminal's width in characters. */
  readonly columns?: number | undefined
}

/** The outside world of one run of the program. */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>
  /** Relative paths (the default data directory `./.svc`) resolve from here. */
  readonly cwd: string
  /** Data: one JSON document with `--json`, text for people otherwise. */
  readonly stdout: CliOutput
  /** Errors, progress and logs. */
  readonly stderr: CliOutput
  readonly stdin: NodeJS.ReadableStream
  /**
   * Calls `listener` when the user asks the command to stop (SIGINT or SIGTERM for the real process);
   * returns the function that stops listening.
   */
  readonly onStop: (listener: () => void) => () => void
}

/** Tells whether anything was written through it: a failure then prints no error document on stdout. */
export interface WatchedOutput extends CliOutput {
  readonly written: () => boolean
}

/** Wraps `output`, remembering whether anything was written. */
export const watchOutput = (output: CliOutput): WatchedOutput => {
  let written = false
  return {
    write: (text) => {
      if (text !== "") written = true
      return output.write(text)
    },
    get isTTY() {
      return output.isTTY
    },
    get columns() {
      return output.columns
    },
    written: () => written
  }
}
