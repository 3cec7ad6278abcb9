/**
 * The `svc` program: every command family registered on one commander program, and the runner
 * that turns failures into one `svc: <message>` line on stderr and an exit code.
 */
import { Command, CommanderError } from "commander"
import { readFileSync } from "node:fs"
import { changesCommands } from "./commands/changes.js"
import { keysCommands } from "./commands/keys.js"
import { membersCommands } from "./commands/members.js"
import { memoriesCommands } from "./commands/memories.js"
import { orgsCommands } from "./commands/orgs.js"
import { reviewCommands } from "./commands/review.js"
import { serveCommand } from "./commands/serve.js"
import { sourcesCommands } from "./commands/sources.js"
import { CliError, toCliError, usage } from "./errors.js"

/** A command family registers its commands (usually one group, like `svc keys ...`) on the program. */
export type CommandFamily = (program: Command) => void

/**
 * Every command family, in the order help lists them: local administration on the data directory first,
 * then the commands that act through the API. A new family is one file and one entry here.
 */
export const families: ReadonlyArray<CommandFamily> = [
  serveCommand,
  orgsCommands,
  membersCommands,
  keysCommands,
  reviewCommands,
  memoriesCommands,
  sourcesCommands,
  changesCommands
]

const version = (): string => {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: unknown }
    return typeof pkg.version === "string" ? pkg.version : "0.0.0"
  } catch {
    return "0.0.0"
  }
}

/** Makes a command group without a (known) subcommand a one-line usage error instead of a help dump. */
const requireSubcommands = (command: Command, path: string): void => {
  if (command.commands.length === 0) return
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

/** Builds the `svc` program with every command family. */
export const buildProgram = (): Command => {
  const program = new Command("svc")
    .description(
      "A local, self-hostable implementation of the External API: server, administration on the data directory, and API commands (--base-url, --api-key)."
    )
    .version(version(), "-V, --version")
    .exitOverride()
    .configureOutput({ outputError: () => undefined })
  for (const family of families) family(program)
  requireSubcommands(program, "svc")
  return program
}

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, " ").trim()

/** Parses `argv` and runs the chosen command; on failure prints one line and sets the exit code. */
export const runProgram = async (program: Command, argv: ReadonlyArray<string>): Promise<void> => {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0)
  })
  try {
    await program.parseAsync([...argv])
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode === 0) return
    const failure: CliError =
      error instanceof CommanderError ? usage(error.message.replace(/^error:\s*/, "")) : toCliError(error)
    process.stderr.write(`svc: ${oneLine(failure.message)}\n`)
    process.exitCode = failure.exitCode
  }
}
