/**
 * Where a data directory keeps its SQLite database, and whether a directory is one: plain file
 * system checks without the database's modules, for the CLI's start-up and its usage checks.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"

/** The database file inside a data directory. */
export const databaseFile = (dataDir: string): string => join(dataDir, "svc.sqlite")

/**
 * Whether `dataDir` is a data directory: it holds the database. Administration opens only these
 * (opening creates the database); `svc serve` creates them.
 */
export const isDataDirectory = (dataDir: string): boolean => existsSync(databaseFile(dataDir))
