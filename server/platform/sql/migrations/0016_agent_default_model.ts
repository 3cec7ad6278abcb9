/**
 * Migration 0016: Agents that name no model. Until now an Agent created without `model` was kept
 * with `"model":"builtin"`, the implicit default written out, so `SVC_MODEL` never reached it. Now
 * a definition without `model` means the server's default, resolved at run time. Every draft and
 * published version kept with `"model":"builtin"` loses its `model`: one that took the implicit
 * default (almost all of them) follows the server's default from now on, as documented; one where
 * `builtin` was named on purpose cannot be told apart and follows it too (reads show
 * `modelSource: "default"`; naming `builtin` again keeps it). Other model names are untouched, and
 * so is `updated_at` (what an Agent is did not change, only how its default is kept). With no
 * `SVC_MODEL` nothing runs differently: the default is `builtin`.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { dialectOf } from "../dialect.js"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  if (dialectOf(sql) === "pg") {
    yield* sql`UPDATE agents SET draft = (draft::jsonb - 'model')::text WHERE draft::jsonb ->> 'model' = 'builtin'`
    yield* sql`UPDATE agent_versions SET definition = (definition::jsonb - 'model')::text WHERE definition::jsonb ->> 'model' = 'builtin'`
  } else {
    yield* sql`UPDATE agents SET draft = json_remove(draft, '$.model') WHERE json_extract(draft, '$.model') = 'builtin'`
    yield* sql`UPDATE agent_versions SET definition = json_remove(definition, '$.model') WHERE json_extract(definition, '$.model') = 'builtin'`
  }
})
