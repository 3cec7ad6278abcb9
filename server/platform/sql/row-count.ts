/**
 * How many rows of one of its tables an organization has: the count each family's repository
 * answers for administration (`svc status`), on either backend (PostgreSQL's `count(*)` is a
 * bigint, which arrives as text).
 */
import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"

/** The rows of `table` whose `organization_id` is `organizationId` and that meet `also` (an `AND …` fragment), counted. */
export const organizationRowCount = (
  sql: SqlClient.SqlClient,
  table: string,
  organizationId: string,
  also: Fragment = sql.literal("")
): Effect.Effect<number> =>
  Effect.orDie(sql<{ n: number | string }>`SELECT count(*) AS n FROM ${sql(table)} WHERE organization_id = ${organizationId} ${also}`).pipe(
    Effect.map((rows) => Number(rows[0]?.n ?? 0))
  )
