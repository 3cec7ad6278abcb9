/**
 * Runs admin effects on a data directory, turning their failures into CLI errors. The server's
 * modules load on first use, so help and usage errors stay fast.
 */
import type { Effect } from "effect"
import type { AdminServices } from "../server/admin.js"
import type { AccountsService } from "../server/platform/accounts/service.js"
import { describe, failure, fromCause } from "./errors.js"
import type { CliIo } from "./io.js"
import { type DataDirOptions, resolveDatabase, resolveDataDir } from "./options.js"

/**
 * Runs one admin effect on the command's data directory (or its `--database`); expected failures
 * become exit 1. A directory without a database is refused, and nothing is created: only `svc serve`
 * makes a data directory. A PostgreSQL database is opened (and migrated) as it is.
 */
export const admin = async <A, E>(
  io: CliIo,
  options: DataDirOptions,
  effect: Effect.Effect<A, E, AdminServices>
): Promise<A> => {
  const [{ isDataDirectory, runAdmin }, { Effect, Exit }] = await Promise.all([import("../server/admin.js"), import("effect")])
  const dataDir = resolveDataDir(io, options.dataDir)
  const database = resolveDatabase(io, options.database)
  if (database === undefined && !isDataDirectory(dataDir)) {
    throw failure(`no data directory at ${dataDir}; pass --data-dir (svc serve creates one there).`, "no_data_directory")
  }
  const exit = await runAdmin({ dataDir, database }, Effect.exit(effect)).catch((error: unknown) => {
    throw failure(database === undefined ? `cannot open the data directory ${dataDir}: ${describe(error)}` : `cannot open the database: ${describe(error)}`)
  })
  if (Exit.isSuccess(exit)) return exit.value
  throw fromCause(exit.cause)
}

/** Runs `use` with the accounts service on the command's data directory. */
export const withAccounts = async <A, E>(
  io: CliIo,
  options: DataDirOptions,
  use: (accounts: AccountsService) => Effect.Effect<A, E, AdminServices>
): Promise<A> => {
  const [{ AccountsService }, { Effect }] = await Promise.all([
    import("../server/platform/accounts/service.js"),
    import("effect")
  ])
  return admin(io, options, Effect.flatMap(AccountsService, use))
}

/** Runs `use` with the id of the organization named by `--org` on the command's data directory. */
export const withOrganization = async <A, E>(
  io: CliIo,
  options: DataDirOptions & { readonly org: string },
  use: (organizationId: string) => Effect.Effect<A, E, AdminServices>
): Promise<A> => {
  const [{ AccountsService }, { Effect }] = await Promise.all([
    import("../server/platform/accounts/service.js"),
    import("effect")
  ])
  return admin(io, options, Effect.flatMap(Effect.flatMap(AccountsService, (accounts) => accounts.organization(options.org)), (org) => use(org.id)))
}
