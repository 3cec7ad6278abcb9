/**
 * What administration stands on: the database of a data directory (or a PostgreSQL URL), the
 * clock and the stderr logger, and the running of admin effects on it with the services they use.
 * `admin.ts` puts every service on it; each CLI admin command puts only the services it uses, so it
 * loads and builds no more than those (docs/performance.md, "CLI start-up").
 */
import { type Effect, Layer, ManagedRuntime } from "effect"
import { AppClock } from "./platform/clock.js"
import { StderrLogger } from "./platform/logging.js"
import { DatabaseLive } from "./platform/sql/database.js"

/** Where administration acts: a data directory, and a `postgres://` URL when the service runs on PostgreSQL. */
export type AdminTarget = string | { readonly dataDir: string; readonly database?: string | undefined }

const targetOf = (target: AdminTarget) => (typeof target === "string" ? { dataDir: target, database: undefined } : target)

/** The database (schema brought up to date) and the system clock. */
export const AdminBaseLive = (target: AdminTarget) =>
  AppClock.system.pipe(Layer.provideMerge(DatabaseLive(targetOf(target).dataDir, targetOf(target).database)))

/** What every admin service may require: the database and the clock. */
export type AdminBase = Layer.Layer.Success<ReturnType<typeof AdminBaseLive>>

/** `services` over the base, every layer built with the stderr logger. */
export const adminLayer = <S, E>(target: AdminTarget, services: Layer.Layer<S, E, AdminBase>) =>
  services.pipe(Layer.provideMerge(AdminBaseLive(target)), Layer.provide(StderrLogger()))

/** A handle on a data directory (or database) for running effects on `services`; close it when done. */
export const openAdminWith = <S, E>(target: AdminTarget, services: Layer.Layer<S, E, AdminBase>) => {
  const runtime = ManagedRuntime.make(adminLayer(target, services))
  return {
    run: <A, F>(effect: Effect.Effect<A, F, S | AdminBase>): Promise<A> => runtime.runPromise(effect),
    close: () => runtime.dispose()
  }
}

/** Runs one effect on `services` over a data directory (or database), opening and closing the database around it. */
export const runAdminWith = async <S, E, A, F>(
  target: AdminTarget,
  services: Layer.Layer<S, E, AdminBase>,
  effect: Effect.Effect<A, F, S | AdminBase>
): Promise<A> => {
  const admin = openAdminWith(target, services)
  try {
    return await admin.run(effect)
  } finally {
    await admin.close()
  }
}
