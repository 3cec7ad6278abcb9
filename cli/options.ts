/**
 * Shared option handling: the data directory, comma lists, numbers, and choices from fixed lists.
 * Parsers used as commander `argParser`s throw `InvalidArgumentError` (bad usage, exit 2).
 */
import { type Command, InvalidArgumentError } from "commander"
import { resolve } from "node:path"
import { failure } from "./errors.js"
import type { CliIo } from "./io.js"

/** Options every command takes. */
export interface CommonOptions {
  readonly json?: boolean | undefined
}

/** Options of commands that act on a data directory. */
export interface DataDirOptions extends CommonOptions {
  readonly dataDir?: string | undefined
  readonly database?: string | undefined
}

/** The data directory: `--data-dir`, else `SVC_DATA_DIR`, else `./.svc`, made absolute. */
export const resolveDataDir = (io: CliIo, option: string | undefined): string =>
  resolve(io.cwd, option ?? (io.env.SVC_DATA_DIR || undefined) ?? ".svc")

/**
 * The PostgreSQL URL to run on: `--database`, else `SVC_DATABASE_URL`; undefined means the data
 * directory's SQLite file.
 */
export const resolveDatabase = (io: CliIo, option: string | undefined): string | undefined =>
  option || io.env.SVC_DATABASE_URL || undefined

/** Adds `--json` to a command. */
export const withJson = (command: Command): Command =>
  command.option("--json", "print one machine-readable JSON document on stdout")

/** Adds `--data-dir`, `--database` and `--json` to a command. */
export const withDataDir = (command: Command): Command =>
  withJson(
    command
      .option("--data-dir <dir>", "data directory (default: $SVC_DATA_DIR or ./.svc)")
      .option("--database <url>", "a postgres:// URL to keep the data in PostgreSQL (default: $SVC_DATABASE_URL, else SQLite in the data directory)")
  )

/** Splits `a,b , c` into `["a", "b", "c"]`, dropping empty entries. */
export const parseList = (value: string): Array<string> =>
  value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "")

/** Parses a whole number (commander `argParser`). */
export const parseWholeNumber = (value: string): number => {
  const number = Number(value)
  if (value.trim() === "" || !Number.isInteger(number)) throw new InvalidArgumentError("Expected a whole number.")
  return number
}

/** Parses a whole number of at least 1 (commander `argParser`). */
export const parsePositive = (value: string): number => {
  const number = Number(value)
  if (value.trim() === "" || !Number.isInteger(number) || number < 1) throw new InvalidArgumentError("Expected a whole number of at least 1.")
  return number
}

/** Parses a TCP port, 0 to 65535 (commander `argParser`). */
export const parsePort = (value: string): number => {
  const port = Number(value)
  if (value.trim() === "" || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError("Expected a port number from 0 to 65535.")
  }
  return port
}

/** Parses exactly three positive numbers of seconds, `S1,S2,S3` (commander `argParser`). */
export const parseRetryDelays = (value: string): [number, number, number] => {
  const parts = value.split(",").map((part) => part.trim())
  const numbers = parts.map(Number)
  const [a, b, c] = numbers
  if (numbers.length !== 3 || parts.some((p) => p === "") || numbers.some((n) => !Number.isFinite(n) || n <= 0)) {
    throw new InvalidArgumentError("Expected exactly three positive numbers of seconds, like 10,60,300.")
  }
  return [a!, b!, c!]
}

/** Checks that `value` is one of `allowed`, or fails (exit 1) naming the known values. */
export const oneOf = <T extends string>(what: string, allowed: ReadonlyArray<T>, value: string): T => {
  if ((allowed as ReadonlyArray<string>).includes(value)) return value as T
  throw failure(`unknown ${what} '${value}'; known: ${allowed.join(", ")}.`)
}

/** Checks every entry of a comma list against `allowed`. */
export const allOf = <T extends string>(what: string, allowed: ReadonlyArray<T>, values: ReadonlyArray<string>): Array<T> =>
  values.map((value) => oneOf(what, allowed, value))

const selfRunning = new WeakSet<Command>()

/** Marks a command that has subcommands and also runs by itself (`svc mcp` beside `svc mcp config`). */
export const runsWithoutSubcommand = (command: Command): void => {
  selfRunning.add(command)
}

/** Whether `command` runs by itself when no subcommand is named. */
export const isSelfRunning = (command: Command): boolean => selfRunning.has(command)
