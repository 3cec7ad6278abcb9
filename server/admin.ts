/**
 * Local administration on a data directory (the dashboard's part) with every service: the tests
 * and the benchmarks run effects here, beside a running server if there is one. It loads services
 * only (`feature-services.ts`), never a contract or a handler; the CLI's admin commands run on
 * `admin-base.ts` with just the services each uses.
 */
import { type Effect, Layer } from "effect"
import { adminLayer, type AdminTarget, openAdminWith } from "./admin-base.js"
import { allFeatureServices } from "./feature-services.js"
import { McpSignInLive } from "./mcp/sign-in/feature.js"
import { EmbeddingConfig } from "./knowledge/embeddings/config.js"
import { IngestionConfig } from "./knowledge/sources/ingestion-config.js"
import { AccountsService } from "./identity/service.js"
import { InstanceRegistry } from "./platform/instances/registry.js"
import { InstanceSettings } from "./platform/instances/settings.js"
import { mergeLayers } from "./platform/feature.js"
import { CacheVersions } from "./platform/sql/cache-versions.js"
import { ReadConnection } from "./platform/sql/read-connection.js"
import { ModelConfig } from "./platform/model-config.js"
import { WebhookSettings } from "./webhooks/domain.js"

export type { AdminTarget } from "./admin-base.js"
export { isDataDirectory } from "./platform/sql/database-file.js"

/** Every service, with the registry, read connection, cache versions and settings they stand on (over `admin-base.ts`'s database and clock). */
const AllServicesLive = Layer.mergeAll(AccountsService.Default, mergeLayers(allFeatureServices), McpSignInLive).pipe(
  Layer.provideMerge(InstanceRegistry.Default),
  Layer.provideMerge(Layer.merge(ReadConnection.Default, CacheVersions.Default)),
  Layer.provideMerge(InstanceSettings.layer()),
  Layer.provideMerge(IngestionConfig.layer()),
  Layer.provideMerge(ModelConfig.fromEnv()),
  Layer.provideMerge(EmbeddingConfig.fromEnv()),
  Layer.provideMerge(WebhookSettings.layer())
)

/** Services available to administration. */
export const AdminLive = (target: AdminTarget) => adminLayer(target, AllServicesLive)

/** Services available to an admin effect. */
export type AdminServices = Layer.Layer.Success<ReturnType<typeof AdminLive>>

/** A handle on a data directory (or database) for running admin effects; close it when done. */
export const openAdmin = (target: AdminTarget) => openAdminWith(target, AllServicesLive)

/** Runs one admin effect on a data directory (or database), opening and closing the database around it. */
export const runAdmin = async <A, E>(target: AdminTarget, effect: Effect.Effect<A, E, AdminServices>): Promise<A> => {
  const admin = openAdmin(target)
  try {
    return await admin.run(effect)
  } finally {
    await admin.close()
  }
}
