/** SQL of Suites and their Apps (writes inside the caller's transaction). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { appIdsTx } from "../../builder/versions/items-repo.js"
import { organizationRowCount } from "../../platform/sql/row-count.js"
import { placeholders, textPerCount } from "../../platform/sql/statement-text.js"
import { statementsOn, type TxBody, txAll } from "../../platform/sql/write-fast-path.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const suiteAppsWrites = declareWrites("suite_apps")
const suitesWrites = declareWrites("suites")

const suiteIdsText = textPerCount((count) => `SELECT id FROM suites WHERE organization_id = ? AND id IN (${placeholders(count)})`)

/** Which of `ids` name a Suite of the organization (a transaction body step). */
export function* suiteIdsTx(organizationId: string, ids: ReadonlyArray<string>): TxBody<Set<string>> {
  if (ids.length === 0) return new Set<string>()
  const rows = yield* txAll<{ id: string }>(suiteIdsText(ids.length), [organizationId, ...ids])
  return new Set(rows.map((row) => row.id))
}

/** Suites in SQL. */
export class SuiteRepo extends Effect.Service<SuiteRepo>()("svc/SuiteRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const statements = statementsOn(sql)
    return {
      /** How many Suites the organization has. */
      count: (organizationId: string) => organizationRowCount(sql, "suites", organizationId),
      /** Every Suite of the organization with its Apps in order, oldest first (administration: `svc suites list`). */
      all: (organizationId: string) =>
        Effect.orDie(
          Effect.gen(function* () {
            const suites = yield* sql<{ id: string; name: string }>`SELECT id, name FROM suites WHERE organization_id = ${organizationId} ORDER BY created_at, id`
            const apps = yield* sql<{ suite_id: string; app_id: string }>`SELECT a.suite_id, a.app_id FROM suite_apps a
              JOIN suites s ON s.id = a.suite_id WHERE s.organization_id = ${organizationId} ORDER BY a.suite_id, a.position`
            return suites.map((suite) => ({ id: suite.id, name: suite.name, appIds: apps.filter((app) => app.suite_id === suite.id).map((app) => app.app_id) }))
          })
        ),
      /** Which of `ids` are Apps of the organization (the builder's answer). */
      existingApps: (organizationId: string, ids: ReadonlyArray<string>): Effect.Effect<Set<string>> => statements(appIdsTx(organizationId, ids)),

      /** Inserts a Suite with its Apps in order. */
      insert: (organizationId: string, suite: { id: string; name: string; appIds: ReadonlyArray<string> }, at: string) =>
        Effect.orDie(
          Effect.gen(function* () {
            yield* sql`INSERT INTO suites ${sql.insert({ id: suite.id, organization_id: organizationId, name: suite.name, created_at: at })}`.pipe(writing(suitesWrites))
            if (suite.appIds.length > 0) {
              yield* sql`INSERT INTO suite_apps ${sql.insert(suite.appIds.map((appId, position) => ({ suite_id: suite.id, app_id: appId, position })))}`.pipe(writing(suiteAppsWrites))
            }
          })
        ),

      /** The Suite of the organization with its Apps in order, or null. */
      find: (organizationId: string, id: string) =>
        Effect.orDie(
          Effect.gen(function* () {
            const rows = yield* sql<{ id: string; name: string }>`SELECT id, name FROM suites WHERE organization_id = ${organizationId} AND id = ${id}`
            const row = rows[0]
            if (!row) return null
            const apps = yield* sql<{ app_id: string }>`SELECT app_id FROM suite_apps WHERE suite_id = ${id} ORDER BY position`
            return { id: row.id, name: row.name, appIds: apps.map((app) => app.app_id) }
          })
        )
    }
  })
}) {}
