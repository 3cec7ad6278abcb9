/**
 * One owner per table (issue 22): SQL is written only in repository modules (`repo.ts` or
 * `<name>-repo.ts`), besides the SQL layer itself (`server/platform/sql/**`: connections, the write
 * fast path, migrations), and each table is named in SQL only by the modules of the family that
 * owns it; other families call the owner's exported steps and queries. The exceptions are listed
 * below, each with why it stays. Stale exceptions fail too, so the lists only shrink.
 */
import { readFileSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { createdTables, sqlOfSource, typeScriptFiles } from "../support/sql-scan.js"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

/** The SQL layer: connections, dialects, the write fast path, cache versions and migrations. */
const sqlLayer = "server/platform/sql/"

/** Whether a file is a repository module by name. */
const isRepository = (path: string): boolean => /^(?:repo|[\w-]+-repo)\.ts$/.test(basename(path))

/**
 * Files that hold SQL without being repository modules, and why each stays (the next steps of
 * issue 22, or files others own).
 */
const sqlOutsideRepositories: Readonly<Record<string, string>> = {
  "server/knowledge/embeddings/sqlite-vec.ts": "`SELECT vec_version()` checks that the sqlite-vec extension loaded on a connection: no table, part of the connection set-up",
  "server/platform/idempotency.ts": "the idempotency store is platform infrastructure written inside each keyed write's own transaction; its table has no other user",
  "server/platform/instances/registry.ts": "the instance registry's heartbeat and the claim predicates recovery embeds in other families' statements (`sql` fragments)",
  "server/platform/pg-rate-limiter.ts": "the PostgreSQL rate limiter's advisory lock and sliding window: infrastructure, one table of its own"
}

/**
 * The family folder that owns each table: the only place its name is written in SQL. (A table named
 * through an interpolation is not seen: `builder/versions/reference-repo.ts` checks Knowledgebase ids
 * through `${sql(table)}`, the one such read of another family's table left.)
 */
const owners: Readonly<Record<string, string>> = {
  organizations: "server/identity",
  members: "server/identity",
  api_keys: "server/identity",
  settings: "server/platform/settings-repo.ts",
  idempotency_keys: "server/platform/idempotency.ts",
  service_instances: "server/platform/instances",
  rate_limit_hits: "server/platform/pg-rate-limiter.ts",
  // One versioned-item store (`builder/versions`) serves the three kinds of item.
  agents: "server/builder",
  agent_versions: "server/builder",
  flows: "server/builder",
  flow_versions: "server/builder",
  apps: "server/builder",
  app_versions: "server/builder",
  knowledgebases: "server/knowledge/knowledgebases",
  pages: "server/knowledge/pages",
  page_revisions: "server/knowledge/pages",
  page_links: "server/knowledge/pages",
  sources: "server/knowledge/sources",
  source_originals: "server/knowledge/sources",
  passages: "server/knowledge/sources",
  knowledgebase_sources: "server/knowledge/sources",
  ingestion_jobs: "server/knowledge/sources",
  passage_vectors: "server/knowledge/embeddings",
  changes: "server/knowledge/changes",
  change_history: "server/knowledge/changes",
  knowledge_activity: "server/knowledge/activity",
  memories: "server/knowledge/memories",
  // The full-text indexes are kept by triggers (migrations) and read by search only.
  pages_fts: "server/knowledge/search",
  passages_fts: "server/knowledge/search",
  passages_vocab: "server/knowledge/search",
  memories_fts: "server/knowledge/search",
  search_counters: "server/knowledge/search",
  search_statistics: "server/knowledge/search",
  conversations: "server/runtime/runs",
  messages: "server/runtime/runs",
  executions: "server/runtime/runs",
  run_events: "server/runtime/runs",
  execution_traces: "server/runtime/runs",
  conversation_locks: "server/runtime/runs",
  mcp_connections: "server/mcp",
  end_users: "server/provisioning/end-users",
  subscriptions: "server/provisioning/end-users",
  end_user_grants: "server/provisioning/end-users",
  bonus_credit_adjustments: "server/provisioning/end-users",
  tier_plans: "server/provisioning/plans",
  user_groups: "server/provisioning/groups",
  group_members: "server/provisioning/groups",
  group_grants: "server/provisioning/groups",
  suites: "server/provisioning/suites",
  suite_apps: "server/provisioning/suites",
  portals: "server/provisioning/portals",
  portal_admissions: "server/provisioning/admissions",
  outbox_emails: "server/provisioning/outbox",
  portal_codes: "server/portal",
  portal_sessions: "server/portal",
  portal_conversations: "server/portal",
  portal_webhooks: "server/webhooks",
  webhook_deliveries: "server/webhooks",
  webhook_attempts: "server/webhooks",
  mcp_sign_in_codes: "server/identity/mcp-sign-in",
  mcp_authorization_codes: "server/identity/mcp-sign-in",
  mcp_oauth_clients: "server/identity/mcp-sign-in",
  mcp_sessions: "server/identity/mcp-sign-in",
  schema_migrations: sqlLayer
}

/**
 * Tables a file names in SQL without owning them, and why: statements that join across families
 * in one indexed read on a hot path, where calling each owner would cost a query per family.
 */
const foreignTables: Readonly<Record<string, { readonly tables: ReadonlyArray<string>; readonly why: string }>> = {
  "server/knowledge/search/repo.ts": {
    tables: ["passages", "sources", "pages", "memories"],
    why: "search reads the rows its full-text hits name in the statement that filters them (a source's status, a page's Knowledgebase), and counts over the tables' own tsvector columns on PostgreSQL"
  },
  "server/knowledge/search/pg-index-repo.ts": { tables: ["passages"], why: "PostgreSQL's full-text index is the passages table's tsvector column" },
  "server/knowledge/embeddings/repo.ts": {
    tables: ["passages", "sources", "knowledgebase_sources"],
    why: "passages waiting for a vector and the nearest passages of a Knowledgebase are one indexed join with the passages they embed"
  },
  "server/knowledge/pages/repo.ts": {
    tables: ["knowledgebases", "sources", "knowledgebase_sources"],
    why: "a page write keeps its Knowledgebase's stored counts and revision in the same transaction body; the page index lists a Knowledgebase's sources beside its pages"
  },
  "server/knowledge/sources/repo.ts": { tables: ["knowledgebases"], why: "a source write keeps its Knowledgebase's stored counts in the same transaction" },
  "server/portal/repo.ts": { tables: ["end_users"], why: "a Portal session is read with its end user in one indexed read per Portal request" },
  "server/provisioning/access/repo.ts": {
    tables: ["end_users", "group_members", "group_grants", "end_user_grants", "user_groups", "portal_admissions", "suites", "suite_apps"],
    why: "an end user's access is one statement over memberships, plan groups, admissions, grants and Suites"
  },
  "server/provisioning/admissions/repo.ts": { tables: ["user_groups"], why: "an admission is listed with its group's name and plan in one read" },
  "server/provisioning/end-users/repo.ts": {
    tables: ["tier_plans", "group_members"],
    why: "an end user's record is read with its subscriptions' plan names and its direct groups"
  },
  "server/provisioning/end-users/tx-repo.ts": {
    tables: ["tier_plans", "user_groups", "group_members"],
    why: "provisioning's one-statement look-up (account, plans, groups) and its membership writes run in one write fast path body"
  },
  "server/provisioning/groups/repo.ts": {
    tables: ["end_users", "subscriptions"],
    why: "rosters and member counts join the members' accounts, and plan groups' holders (`planHoldersFrom`, the one plan-group rule)"
  },
  "server/provisioning/plans/repo.ts": { tables: ["user_groups"], why: "a plan and its plan group are created together" },
  "server/runtime/runs/credit-repo.ts": {
    tables: ["subscriptions"],
    why: "a Portal run spends its end user's subscription credit pools in the transaction that records the execution (runtime does not import provisioning)"
  }
}

const migrations = `${sqlLayer}migrations/`
const knownTables = new Set([...createdTables(root), ...Object.keys(owners)])
const serverSql = typeScriptFiles(root, "server")
  .map((path) => ({ path, texts: sqlOfSource(path, readFileSync(join(root, path), "utf8"), knownTables) }))
  .filter(({ texts }) => texts.length > 0)

/** Whether `path` is within the owner `owner` names (a folder, or one file). */
const ownedBy = (path: string, owner: string) => (owner.endsWith(".ts") ? path === owner : path.startsWith(owner.endsWith("/") ? owner : `${owner}/`))

describe("SQL has one owner per table", () => {
  it("finds SQL in each of its forms, and not in comments (the scanner itself)", () => {
    const tables = new Set(["apps", "messages", "end_users"])
    const source = [
      "// SELECT id FROM apps in a comment is not SQL",
      "const a = sql`SELECT id FROM apps WHERE id = ${id}`",
      'const b = reader.all("SELECT role, text FROM messages WHERE conversation_id = ?", [id])',
      "const c = sql.unsafe(text, params)",
      "function* d() { yield* txRun(`UPDATE end_users SET state = ? WHERE id = ${'?'}`, []) }",
      'const e = "Select the Apps to show"'
    ].join("\n")
    const found = sqlOfSource("example.ts", source, tables)
    expect(found.map((text) => [text.line, text.form, text.tables])).toEqual([
      [2, "sql template", ["apps"]],
      [3, "string", ["messages"]],
      [4, "unsafe call", []],
      [5, "string", ["end_users"]]
    ])
  })

  it("sees the SQL of the server (a scan that finds nothing would pass vacuously)", () => {
    const paths = serverSql.map(({ path }) => path)
    expect(paths).toContain("server/builder/apps/repo.ts")
    expect(paths).toContain("server/portal/repo.ts")
    expect(paths).toContain("server/provisioning/end-users/tx-repo.ts")
    expect(paths.filter((path) => path.startsWith(migrations)).length).toBeGreaterThan(15)
  })

  it("writes SQL only in repository modules (repo.ts, <name>-repo.ts) and the SQL layer", () => {
    const outside = serverSql
      .map(({ path, texts }) => ({ path, first: texts[0]! }))
      .filter(({ path }) => !path.startsWith(sqlLayer) && !isRepository(path) && sqlOutsideRepositories[path] === undefined)
      .map(({ path, first }) => `${path}:${first.line} (${first.form}: ${first.text.trim().slice(0, 60)})`)
    expect(outside).toEqual([])
  })

  it("lists as exceptions only files that still hold SQL outside a repository module", () => {
    const holding = new Set(serverSql.map(({ path }) => path))
    const stale = Object.keys(sqlOutsideRepositories).filter((path) => !holding.has(path) || isRepository(path))
    expect(stale).toEqual([])
  })

  it("gives every table the migrations create an owner", () => {
    const unowned = [...createdTables(root)].filter((table) => owners[table] === undefined).sort()
    expect(unowned).toEqual([])
  })

  it("names each table in SQL only in its owner's modules, and the listed joins", () => {
    const foreign = serverSql
      .filter(({ path }) => !path.startsWith(migrations))
      .flatMap(({ path, texts }) =>
        [...new Set(texts.flatMap((text) => text.tables))]
          .filter((table) => !ownedBy(path, owners[table]!) && !(foreignTables[path]?.tables.includes(table) ?? false))
          .sort()
          .map((table) => `${path} names ${table} (owned by ${owners[table]})`)
      )
    expect(foreign).toEqual([])
  })

  it("lists as foreign only tables a file still names", () => {
    const named = new Map(serverSql.map(({ path, texts }) => [path, new Set(texts.flatMap((text) => text.tables))]))
    const stale = Object.entries(foreignTables).flatMap(([path, { tables }]) =>
      tables.filter((table) => !(named.get(path)?.has(table) ?? false) || ownedBy(path, owners[table]!)).map((table) => `${path}: ${table}`)
    )
    expect(stale).toEqual([])
  })
})
