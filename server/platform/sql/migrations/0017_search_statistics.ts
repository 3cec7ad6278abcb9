/**
 * Migration 0017: ranking statistics per organization. Until now BM25's statistics (how many
 * passages there are, their average length, how many hold a word) were those of the whole index,
 * every organization's text together: one tenant's uploads moved another's scores. Now each
 * organization has a row of `search_statistics`, keyed by its scope token (`o<id>0`, the first
 * token of a passage's `scope`), kept by triggers in the same transaction as the write: its
 * passages and pages (folders aside), their words (spaces and line breaks counted, as
 * `wordCount` in `server/knowledge/search/analyzer.ts` counts them) and a change counter that
 * moves with every write, so that search's per-organization word frequencies (cached) are exact.
 * The table has no foreign key: a deleted organization's row stays at zero, unread.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { dialectOf } from "../dialect.js"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const pg = dialectOf(sql) === "pg"
  yield* sql`CREATE TABLE search_statistics (
    scope TEXT PRIMARY KEY,
    passages BIGINT NOT NULL DEFAULT 0,
    passage_words BIGINT NOT NULL DEFAULT 0,
    pages BIGINT NOT NULL DEFAULT 0,
    page_words BIGINT NOT NULL DEFAULT 0,
    changes BIGINT NOT NULL DEFAULT 0
  )`
  if (pg) {
    const words = (x: string) => `(length(${x}) - length(replace(replace(${x}, ' ', ''), chr(10), '')) + 1)`
    const page = (row: string) => `(CASE WHEN ${row}.template_key = 'folder' THEN 0 ELSE 1 END)`
    const pageScope = (row: string) => `'o' || lower(replace(${row}.organization_id, '-', '')) || '0'`
    yield* sql.unsafe(`CREATE FUNCTION search_statistics_passages() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE search_statistics SET passages = passages - 1, passage_words = passage_words - ${words("old.text")}, changes = changes + 1
          WHERE scope = split_part(old.scope, ' ', 1);
      END IF;
      IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO search_statistics (scope, passages, passage_words, changes) VALUES (split_part(new.scope, ' ', 1), 1, ${words("new.text")}, 1)
          ON CONFLICT (scope) DO UPDATE SET passages = search_statistics.passages + 1,
            passage_words = search_statistics.passage_words + excluded.passage_words, changes = search_statistics.changes + 1;
      END IF;
      RETURN NULL;
    END $$`)
    yield* sql`CREATE TRIGGER search_statistics_passages AFTER INSERT OR DELETE OR UPDATE OF text ON passages
      FOR EACH ROW EXECUTE FUNCTION search_statistics_passages()`
    yield* sql.unsafe(`CREATE FUNCTION search_statistics_pages() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE search_statistics SET pages = pages - ${page("old")}, page_words = page_words - ${page("old")} * ${words("old.markdown")},
          changes = changes + 1 WHERE scope = ${pageScope("old")};
      END IF;
      IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO search_statistics (scope, pages, page_words, changes) VALUES (${pageScope("new")}, ${page("new")}, ${page("new")} * ${words("new.markdown")}, 1)
          ON CONFLICT (scope) DO UPDATE SET pages = search_statistics.pages + excluded.pages,
            page_words = search_statistics.page_words + excluded.page_words, changes = search_statistics.changes + 1;
      END IF;
      RETURN NULL;
    END $$`)
    yield* sql`CREATE TRIGGER search_statistics_pages AFTER INSERT OR DELETE OR UPDATE OF title, markdown, template_key ON pages
      FOR EACH ROW EXECUTE FUNCTION search_statistics_pages()`
    yield* sql.unsafe(`INSERT INTO search_statistics (scope, passages, passage_words)
      SELECT split_part(scope, ' ', 1), count(*), coalesce(sum(${words("text")}), 0) FROM passages GROUP BY 1`)
    yield* sql.unsafe(`INSERT INTO search_statistics (scope, pages, page_words)
      SELECT ${pageScope("p")}, count(*), coalesce(sum(${words("p.markdown")}), 0) FROM pages p WHERE p.template_key != 'folder' GROUP BY 1
      ON CONFLICT (scope) DO UPDATE SET pages = excluded.pages, page_words = excluded.page_words`)
    return
  }
  const words = (x: string) => `(length(${x}) - length(replace(replace(${x}, ' ', ''), char(10), '')) + 1)`
  const firstToken = (x: string) => `(CASE WHEN instr(${x}, ' ') > 0 THEN substr(${x}, 1, instr(${x}, ' ') - 1) ELSE ${x} END)`
  const page = (row: string) => `(CASE WHEN ${row}.template_key = 'folder' THEN 0 ELSE 1 END)`
  const pageScope = (row: string) => `'o' || lower(replace(${row}.organization_id, '-', '')) || '0'`
  const add = (scope: string, columns: string, values: string, sets: string) =>
    `INSERT INTO search_statistics (scope, ${columns}, changes) VALUES (${scope}, ${values}, 1)
      ON CONFLICT (scope) DO UPDATE SET ${sets}, changes = changes + 1;`
  const addPassage = (row: string) =>
    add(firstToken(`${row}.scope`), "passages, passage_words", `1, ${words(`${row}.text`)}`, "passages = passages + 1, passage_words = passage_words + excluded.passage_words")
  const removePassage = (row: string) =>
    `UPDATE search_statistics SET passages = passages - 1, passage_words = passage_words - ${words(`${row}.text`)}, changes = changes + 1
      WHERE scope = ${firstToken(`${row}.scope`)};`
  const addPage = (row: string) =>
    add(pageScope(row), "pages, page_words", `${page(row)}, ${page(row)} * ${words(`${row}.markdown`)}`, "pages = pages + excluded.pages, page_words = page_words + excluded.page_words")
  const removePage = (row: string) =>
    `UPDATE search_statistics SET pages = pages - ${page(row)}, page_words = page_words - ${page(row)} * ${words(`${row}.markdown`)},
      changes = changes + 1 WHERE scope = ${pageScope(row)};`
  yield* sql.unsafe(`CREATE TRIGGER search_statistics_passage_insert AFTER INSERT ON passages BEGIN ${addPassage("new")} END`)
  yield* sql.unsafe(`CREATE TRIGGER search_statistics_passage_delete AFTER DELETE ON passages BEGIN ${removePassage("old")} END`)
  yield* sql.unsafe(`CREATE TRIGGER search_statistics_passage_update AFTER UPDATE OF text ON passages BEGIN
    ${removePassage("old")} ${addPassage("new")} END`)
  yield* sql.unsafe(`CREATE TRIGGER search_statistics_page_insert AFTER INSERT ON pages BEGIN ${addPage("new")} END`)
  yield* sql.unsafe(`CREATE TRIGGER search_statistics_page_delete AFTER DELETE ON pages BEGIN ${removePage("old")} END`)
  yield* sql.unsafe(`CREATE TRIGGER search_statistics_page_update AFTER UPDATE OF title, markdown, template_key ON pages BEGIN
    ${removePage("old")} ${addPage("new")} END`)
  yield* sql.unsafe(`INSERT INTO search_statistics (scope, passages, passage_words)
    SELECT ${firstToken("scope")}, count(*), coalesce(sum(${words("text")}), 0) FROM passages GROUP BY 1`)
  yield* sql.unsafe(`INSERT INTO search_statistics (scope, pages, page_words)
    SELECT ${pageScope("p")}, count(*), coalesce(sum(${words("p.markdown")}), 0) FROM pages p WHERE p.template_key != 'folder' GROUP BY 1
    ON CONFLICT (scope) DO UPDATE SET pages = excluded.pages, page_words = excluded.page_words`)
})
