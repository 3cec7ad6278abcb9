/**
 * Runs admin effects on a data directory, turning their failures into CLI errors. Each command
 * names the services it uses (their layers); they run over `server/admin-base.ts` (the database
 * and the clock), so a command loads and builds those services only. The server's modules, and
 * effect's (each by its own module: effect's index would load them all), load on first use, so
 * help and usage errors stay fast.
 */
import type { Effect, Layer } from "effect"
import type { AdminBase } from "../server/admin-base.js"
import type { AccountsService } from "../server/identity/service.js"
import { adminPrelude } from "./admin-prelude.js"
import { CliError, describe, failure, fromCause } from "./errors.js"
import type { CliIo } from "./io.js"
import { type DataDirOptions, resolveDatabase, resolveDataDir } from "./options.js"

/** The layers of the services an admin command uses, over the database and the clock. */
export type AdminServicesLayer<S> = Layer.Layer<S, unknown, AdminBase>

/**
 * Runs one admin effect, with `services`, on the command's data directory (or its `--database`);
 * expected failures become exit 1. A directory without a database is refused, and nothing is
 * created: only `svc serve` makes a data directory. A PostgreSQL database is opened (and migrated)
 * as it is. Before `effect`, in the same run, `adminPrelude` waits out a first start in progress and
 * fills in a left-out `--org`.
 */
export const admin = async <A, E, S>(
  io: CliIo,
  options: DataDirOptions,
  services: AdminServicesLayer<S>,
  effect: Effect.Effect<A, E, S | AdminBase>
): Promise<A> => {
  const [{ isDataDirectory }, { runAdminWith }, Effect, Exit, Layer, Cause] = await Promise.all([
    import("../server/platform/sql/database-file.js"),
    import("../server/admin-base.js"),
    import("effect/Effect"),
    import("effect/Exit"),
    import("effect/Layer"),
    import("effect/Cause")
  ])
  const dataDir = resolveDataDir(io, options.dataDir)
  const database = resolveDatabase(io, options.database)
  if (database === undefined && !isDataDirectory(dataDir)) {
    throw failure(`no data directory at ${dataDir}; pass --data-dir (svc serve creates one there).`, "no_data_directory")
  }
  const prelude = await adminPrelude(options, dataDir, database, database === undefined ? dataDir : "the database")
  const run =
    prelude === undefined
      ? runAdminWith({ dataDir, database }, services, Effect.exit(effect))
      : runAdminWith({ dataDir, database }, Layer.merge(prelude.services, services), Effect.exit(Effect.zipRight(prelude.effect, effect)))
  const exit = await run.catch((error: unknown) => {
    throw failure(database === undefined ? `cannot open the data directory ${dataDir}: ${describe(error)}` : `cannot open the database: ${describe(error)}`)
  })
  if (Exit.isSuccess(exit)) return exit.value
  const refusal = Cause.failureOption(exit.cause)
  if (refusal._tag === "Some" && refusal.value instanceof CliError) throw refusal.value
  throw fromCause(exit.cause)
}

/** Runs `use` with the accounts service on the command's data directory. */
export const withAccounts = async <A, E>(
  io: CliIo,
  options: DataDirOptions,
  use: (accounts: AccountsService) => Effect.Effect<A, E, AccountsService | AdminBase>
): Promise<A> => {
  const [{ AccountsService }, Effect] = await Promise.all([
    import("../server/identity/service.js"),
    import("effect/Effect")
  ])
  return admin(io, options, AccountsService.Default, Effect.flatMap(AccountsService, use))
}

/**
 * Runs `use` with the id of the organization named by `--org` on the command's data directory,
 * with `services` beside the accounts service (which finds the organization).
 */
export const withOrganization = async <A, E, S>(
  io: CliIo,
  options: DataDirOptions & { readonly org: string },
  services: AdminServicesLayer<S>,
  use: (organizationId: string) => Effect.Effect<A, E, S | AccountsService | AdminBase>
): Promise<A> => {
  const [{ AccountsService }, Effect, Layer] = await Promise.all([
    import("../server/identity/service.js"),
    import("effect/Effect"),
    import("effect/Layer")
  ])
  return admin(
    io,
    options,
    Layer.merge(AccountsService.Default, services),
    Effect.flatMap(Effect.flatMap(AccountsService, (accounts) => accounts.organization(options.org)), (org) => use(org.id))
  )
}
