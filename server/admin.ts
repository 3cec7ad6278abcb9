/**
 * Local administration on a data directory (the dashboard's part): the CLI's admin commands and
 * the tests run effects here, beside a running server if there is one.
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import { existsSync } from "node:fs"
import { features } from "./features.js"
import { McpSignInLive } from "./mcp/sign-in/feature.js"
import { IngestionConfig } from "./knowledge/sources/ingestion-config.js"
import { AccountsService } from "./platform/accounts/service.js"
import { InstanceRegistry } from "./platform/instances/registry.js"
import { InstanceSettings } from "./platform/instances/settings.js"
import { AppClock } from "./platform/clock.js"
import { mergeLayers } from "./platform/feature.js"
import { CacheVersions } from "./platform/sql/cache-versions.js"
import { databaseFile, DatabaseLive } from "./platform/sql/database.js"
import { ReadConnection } from "./platform/sql/read-connection.js"
import { StderrLogger } from "./platform/logging.js"
import { ModelConfig } from "./runtime/config.js"
import { WebhookSettings } from "./webhooks/domain.js"

/**
 * Whether `dataDir` is a data directory: it holds the database. Administration opens only these
 * (opening creates the database); `svc serve` creates them.
 */
export const isDataDirectory = (dataDir: string): boolean => existsSync(databaseFile(dataDir))

/** Where administration acts: a data directory, and a `postgres://` URL when the service runs on PostgreSQL. */
export type AdminTarget = string | { readonly dataDir: string; readonly database?: string | undefined }

const targetOf = (target: AdminTarget) => (typeof target === "string" ? { dataDir: target, database: undefined } : target)

/** Services available to administration. */
export const AdminLive = (target: AdminTarget) =>
  Layer.mergeAll(AccountsService.Default, mergeLayers(features.map((feature) => feature.services)), McpSignInLive).pipe(
    Layer.provideMerge(InstanceRegistry.Default),
    Layer.provideMerge(Layer.merge(ReadConnection.Default, CacheVersions.Default)),
    Layer.provideMerge(InstanceSettings.layer()),
    Layer.provideMerge(IngestionConfig.layer()),
    Layer.provideMerge(ModelConfig.fromEnv()),
    Layer.provideMerge(WebhookSettings.layer()),
    Layer.provideMerge(AppClock.system),
    Layer.provideMerge(DatabaseLive(targetOf(target).dataDir, targetOf(target).database)),
    Layer.provide(StderrLogger())
  )

/** Services available to an admin effect. */
export type AdminServices = Layer.Layer.Success<ReturnType<typeof AdminLive>>

/** A handle on a data directory (or database) for running admin effects; close it when done. */
export const openAdmin = (target: AdminTarget) => {
  const runtime = ManagedRuntime.make(AdminLive(target))
  return {
    run: <A, E>(effect: Effect.Effect<A, E, AdminServices>): Promise<A> => runtime.runPromise(effect),
    close: () => runtime.dispose()
  }
}

/** Runs one admin effect on a data directory (or database), opening and closing the database around it. */
export const runAdmin = async <A, E>(target: AdminTarget, effect: Effect.Effect<A, E, AdminServices>): Promise<A> => {
  const admin = openAdmin(target)
  try {
    return await admin.run(effect)
  } finally {
    await admin.close()
  }
}
