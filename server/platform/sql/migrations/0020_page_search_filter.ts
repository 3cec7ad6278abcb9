/**
 * Migration 0020: the columns page search filters its index hits on, in one index (SQLite).
 *
 * Page search asks FTS5 for the best pages holding a word and keeps those of the Knowledgebases
 * searched that are not folders (`SearchService`'s page candidates). SQLite orders every hit
 * before the `LIMIT`, so it checks the filter on every page holding the word: through
 * `pages_fts_key`, a page's whole table row, about 1,900 rows for a common word among 3,000 pages
 * (1.7 ms warm, 6.5 ms after another connection's commit emptied the reader's page cache). This
 * index answers the filter alone (1.4 and 1.8 ms, docs/performance.md). On PostgreSQL the pages'
 * own `search` column is queried with the filter in the same row; nothing changes there.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { dialectOf } from "../dialect.js"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  if (dialectOf(sql) !== "sqlite") return
  yield* sql`CREATE INDEX IF NOT EXISTS pages_search_filter ON pages (fts_key, knowledgebase_id, template_key)`
})
