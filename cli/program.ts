/**
 * The `svc` program: every command family registered on one commander program, and `runCli`, which
 * runs one command line in-process on the given outside world and returns the exit code: failures
 * become one `svc: <message>` line on stderr (and, with `--json`, the error envelope on stdout).
 */
import { Command, CommanderError } from "commander"
import { changesCommands } from "./commands/changes.js"
import { chatCommand } from "./commands/chat.js"
import { conversationsCommands } from "./commands/conversations.js"
import { endUsersCommands } from "./commands/end-users.js"
import { keysCommands } from "./commands/keys.js"
import { listenCommand } from "./commands/listen.js"
import { mailCommands } from "./commands/mail.js"
import { mcpCommand } from "./commands/mcp.js"
import { membersCommands } from "./commands/members.js"
import { memoriesCommands } from "./commands/memories.js"
import { orgsCommands } from "./commands/orgs.js"
import { plansCommands } from "./commands/plans.js"
import { portalsCommands } from "./commands/portals.js"
import { resetCommand } from "./commands/reset.js"
import { runsCommands } from "./commands/runs.js"
import { suitesCommands } from "./commands/suites.js"
import { reviewCommands } from "./commands/review.js"
import { serveCommand } from "./commands/serve.js"
import { sourcesCommands } from "./commands/sources.js"
import { statusCommand } from "./commands/status.js"
import { subscriptionsCommands } from "./commands/subscriptions.js"
import { CliError, toCliError, usage } from "./errors.js"
import { type CliIo, watchOutput } from "./io.js"
import { packageVersion } from "./version.js"
import { isSelfRunning } from "./options.js"

/**
 * A command family registers its commands (usually one group, like `svc keys ...`) on the program;
 * they read, write and listen for stop requests only through `io`.
 */
export type CommandFamily = (program: Command, io: CliIo) => void

/**
 * Every command family, in the order help lists them: local administration on the data directory first,
 * then the commands that act through the API. A new family is one file and one entry here.
 */
export const families: ReadonlyArray<CommandFamily> = [
  serveCommand,
  statusCommand,
  resetCommand,
  orgsCommands,
  membersCommands,
  keysCommands,
  reviewCommands,
  memoriesCommands,
  plansCommands,
  portalsCommands,
  listenCommand,
  suitesCommands,
  mailCommands,
  subscriptionsCommands,
  sourcesCommands,
  changesCommands,
  chatCommand,
  conversationsCommands,
  runsCommands,
  endUsersCommands,
  mcpCommand
]

/** Makes a command group without a (known) subcommand a one-line usage error instead of a help dump. */
const requireSubcommands = (command: Command, path: string): void => {
  if (command.commands.length === 0 || isSelfRunning(command)) return
  const names = command.commands.map((c) => c.name()).join(", ")
  command.allowExcessArguments().action(() => {
    const [given] = command.args
    throw usage(
      given === undefined
        ? `'${path}' needs a command: ${names} (see '${path} --help').`
        : `unknown command '${given}' for '${path}'; commands: ${names}.`
    )
  })
  for (const sub of command.commands) requireSubcommands(sub, `${path} ${sub.name()}`)
}

/** What `svc --help` says last: the exit codes every command keeps to. */
export const exitCodesHelp = `
Exit codes:
  0  success
  1  refused or failed: the command line was understood, but the data, the server or the API said no
     (the message says why; a refused command writes nothing)
  2  bad usage: an unknown command or option, a missing or conflicting option, or a bad option value
     (the message names it; nothing is written)
`

/** Builds the `svc` program with every command family, on `io`. */
export const buildProgram = (io: CliIo): Command => {
  const program = new Command("svc")
    .description(
      "A local, self-hostable implementation of the External API: server, administration on the data directory, and API commands (--base-url, --api-key)."
    )
    .version(packageVersion(), "-V, --version")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: () => undefined
    })
    .addHelpText("after", exitCodesHelp)
  for (const family of families) family(program, io)
  requireSubcommands(program, "svc")
  return program
}

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, " ").trim()

/** Whether the command line asks for `--json` (before any `--`): failures then print the error envelope. */
const wantsJson = (argv: ReadonlyArray<string>): boolean => {
  const end = argv.indexOf("--")
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json")
}

/** The error envelope of the API, `{"error":{"code","message"}}`, for a failure. */
const errorEnvelope = (failure: CliError) => ({ error: { code: failure.code, message: oneLine(failure.message) } })

/**
 * Runs `svc <argv...>` (the arguments after the program's name) on `io` and resolves with the exit
 * code. Nothing in it exits the process: `bin/svc.js` does, with this code.
 */
export const runCli = async (argv: ReadonlyArray<string>, io: CliIo): Promise<number> => {
  const stdout = watchOutput(io.stdout)
  const program = buildProgram({
    env: io.env,
    cwd: io.cwd,
    stdout,
    stderr: io.stderr,
    get stdin() {
      return io.stdin
    },
    onStop: io.onStop
  })
  try {
    await program.parseAsync([...argv], { from: "user" })
    return 0
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode === 0) return 0
    const failure: CliError =
      error instanceof CommanderError ? usage(error.message.replace(/^error:\s*/, "")) : toCliError(error)
    io.stderr.write(`svc: ${oneLine(failure.line)}\n`)
    // A command that already printed its document (an upload that failed to index) keeps it the only one.
    if (wantsJson(argv) && !stdout.written()) io.stdout.write(`${JSON.stringify(errorEnvelope(failure))}\n`)
    return failure.exitCode
  }
}
