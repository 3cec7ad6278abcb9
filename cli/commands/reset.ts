/**
 * `svc reset`: takes a data directory back to before its first start. It removes the SQLite
 * database (with its WAL, shared-memory and journal files) and the directory's state files (the
 * bootstrap-key record, a stale `server.json`), and nothing else, so the next `svc serve` is a first
 * start with a new bootstrap key. It asks on a terminal and needs `--yes` anywhere else; it refuses,
 * writing nothing, while a server runs or starts on the directory, on a directory without svc's data,
 * and on PostgreSQL (svc never drops a database's tables: drop the database and create it again).
 */
import { createInterface } from "node:readline"
import { existsSync, rmSync } from "node:fs"
import { basename } from "node:path"
import type { Command } from "commander"
import { firstStartDeadline } from "../admin-prelude.js"
import { failure, usage } from "../errors.js"
import type { CliIo } from "../io.js"
import { type DataDirOptions, resolveDatabase, resolveDataDir, withDataDir } from "../options.js"
import { output } from "../output.js"
import { runningServer, serverFile } from "../server-file.js"
import { databaseFile } from "../../server/platform/sql/database-file.js"
import { pendingFile } from "./bootstrap-key.js"

interface ResetOptions extends DataDirOptions {
  readonly yes?: boolean
}

/**
 * The files a reset removes, in the order it removes them: the database's WAL, shared-memory and
 * journal files before the database itself (a WAL left beside a new database would be replayed
 * into it), then the state files.
 */
export const resetFiles = (dataDir: string): ReadonlyArray<string> => {
  const database = databaseFile(dataDir)
  return [`${database}-wal`, `${database}-shm`, `${database}-journal`, database, pendingFile(dataDir), serverFile(dataDir)]
}

/** Whether both ends of the run are a terminal, so that it can ask and be answered. */
const canAsk = (io: CliIo): boolean => io.stdout.isTTY === true && (io.stdin as { readonly isTTY?: boolean }).isTTY === true

/** Asks `question` on stderr and resolves with whether the answer read from stdin is yes. */
const confirm = async (io: CliIo, question: string): Promise<boolean> => {
  io.stderr.write(question)
  const lines = createInterface({ input: io.stdin, terminal: false })
  try {
    const answer = await new Promise<string>((resolve) => {
      lines.once("line", resolve)
      lines.once("close", () => resolve(""))
    })
    return /^\s*y(es)?\s*$/i.test(answer)
  } finally {
    lines.close()
  }
}

/** Why `dataDir` cannot be reset now, or undefined when it can. */
const refusal = (dataDir: string, present: ReadonlyArray<string>) => {
  if (present.length === 0) return failure(`no data directory at ${dataDir}; nothing to reset.`, "no_data_directory")
  const server = runningServer(dataDir)
  if (server !== null) {
    return failure(`a server is running on ${dataDir} (pid ${server.pid}, ${server.baseUrl}); stop it, then reset.`, "server_running")
  }
  const deadline = firstStartDeadline(dataDir)
  if (deadline !== undefined) {
    const wait = Math.ceil((deadline - Date.now()) / 1000)
    return failure(
      `svc serve began a first start on ${dataDir} moments ago and has not finished it; stop it (or, if it failed, wait ${wait}s), then reset.`,
      "server_running"
    )
  }
  return undefined
}

const reset = async (io: CliIo, options: ResetOptions) => {
  const dataDir = resolveDataDir(io, options.dataDir)
  if (options.yes !== true && !canAsk(io)) {
    throw usage(`svc reset removes every organization, key and object in ${dataDir}: pass --yes (it asks only on a terminal).`)
  }
  const database = resolveDatabase(io, options.database)
  if (database !== undefined) {
    const { maskedDatabaseUrl } = await import("../../server/platform/sql/dialect.js")
    throw failure(
      `svc reset works on a data directory's SQLite database; it does not drop the tables of ${maskedDatabaseUrl(database)}: drop that database and create it again (svc serve migrates a new one).`,
      "postgres_not_reset"
    )
  }
  const present = resetFiles(dataDir).filter((file) => existsSync(file))
  const refused = refusal(dataDir, present)
  if (refused !== undefined) throw refused
  if (options.yes !== true) {
    const question = `Reset ${dataDir}? This removes its database (every organization, key and object); the next svc serve makes a new bootstrap key. [y/N] `
    if (!(await confirm(io, question))) throw failure(`not reset: nothing in ${dataDir} was removed.`, "cancelled")
  }
  for (const file of present) rmSync(file, { force: true })
  await output(io, options, present.map((file) => basename(file)), {
    json: (removed) => ({ reset: { dataDir, removed } }),
    human: (removed) => [
      { kind: "title", text: `Reset ${dataDir}` },
      { kind: "fields", rows: [["removed", removed.join(", ")]] },
      { kind: "note", text: "The next svc serve here is a first start: it makes organization 'default' and prints a new bootstrap key." }
    ]
  })
}

/** Registers `svc reset`. */
export const resetCommand = (program: Command, io: CliIo): void => {
  withDataDir(
    program
      .command("reset")
      .description("back to a fresh first start: remove the data directory's database and state files (asks on a terminal)")
      .option("--yes", "reset without asking (required when not on a terminal; missing it there is bad usage, exit 2)")
  ).action((options: ResetOptions) => reset(io, options))
}
