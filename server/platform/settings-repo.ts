/**
 * Server-wide settings (`settings`): named values a database keeps once made, such as the secrets
 * that sign cursors, the activity log's and sign-in codes' keyed hashes, the first start's mark and
 * the demo's ids. This module is the table's one owner; identity, pagination, the activity log and
 * sign-in call it rather than writing its SQL.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type TxBody, txAll, txRun } from "./sql/write-fast-path.js"
import { declareWrites, writing } from "./sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const settingsWrites = declareWrites("settings")

/**
 * A setting made once, whoever asks first: `fresh` is stored unless the setting exists (the first
 * writer wins, concurrent callers included), and the stored value is answered (a transaction body
 * step). The Portal's and the activity log's secrets are made this way.
 */
export function* settingMadeOnceTx(name: string, fresh: string): TxBody<string> {
  yield* txRun("INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", [name, fresh], settingsWrites)
  const rows = yield* txAll<{ value: string }>("SELECT value FROM settings WHERE name = ?", [name])
  return rows[0]!.value
}

/** Server-wide settings in SQL, on the connection (and so in the transaction) of the caller. */
export class ServerSettings extends Effect.Service<ServerSettings>()("svc/ServerSettings", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const setting = (name: string) =>
      Effect.orDie(
        sql<{ value: string }>`SELECT value FROM settings WHERE name = ${name}`.pipe(
          Effect.map((rows) => rows[0]?.value ?? null)
        )
      )
    const putSettingIfAbsent = (name: string, value: string) =>
      Effect.orDie(sql`INSERT INTO settings (name, value) VALUES (${name}, ${value}) ON CONFLICT (name) DO NOTHING`.pipe(writing(settingsWrites)))
    return {
      /** A named server-wide setting's value, or null when it was never set. */
      setting,

      /** Sets a named server-wide setting unless it is set already (the first writer wins). */
      putSettingIfAbsent,

      /** A named server-wide setting, created with `initial` on first read. */
      settingOrInit: (name: string, initial: () => string) =>
        Effect.gen(function* () {
          const existing = yield* setting(name)
          if (existing !== null) return existing
          yield* putSettingIfAbsent(name, initial())
          return (yield* setting(name)) ?? initial()
        })
    }
  })
}) {}
