import { defineConfig } from "vitest/config"

/**
 * The PostgreSQL half of the matrix (issue 13): every directory whose tests touch a database, each
 * test server (and each data directory the CLI tests administer or serve) on its own database cloned
 * from a migrated template (test/support/postgres.ts). The storage directory (many instances on one
 * database) is pg only. Not here, as no backend can change their outcome: bench (the soak suite's
 * judges, pure functions, and a switch of SQLite's `PRAGMA data_version`), package (`npm pack` and
 * an offline install), and the files below that start no server and open no database (the SDK's
 * generator, drift check, export, retries against a fake API and webhook verification; the CLI's
 * renderers). SVC_TEST_PG_ALL=1 runs those too.
 */
const onPostgres = process.env.SVC_TEST_PG_ALL
  ? ["test/**/*.test.ts"]
  : ["http", "platform", "knowledge", "builder", "runtime", "runs", "provisioning", "portal", "webhooks", "storage", "mcp", "cli", "sdk", "docs"].map(
      (dir) => `test/${dir}/**/*.test.ts`
    )
const backendFree = process.env.SVC_TEST_PG_ALL
  ? []
  : [
      "sdk/generator.test.ts",
      "sdk/generator-upload.test.ts",
      "sdk/generator-stream.test.ts",
      "sdk/drift.test.ts",
      "sdk/package-export.test.ts",
      "sdk/retries.test.ts",
      "sdk/webhooks.test.ts",
      "cli/render.test.ts",
      "cli/progress.test.ts"
    ].map((file) => `test/${file}`)

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    projects: [
      { extends: true, test: { name: "sqlite", include: ["test/**/*.test.ts"], exclude: ["test/storage/**"], env: { SVC_TEST_BACKEND: "sqlite" } } },
      {
        extends: true,
        test: { name: "pg", include: onPostgres, exclude: backendFree, env: { SVC_TEST_BACKEND: "pg" }, globalSetup: ["test/support/postgres.ts"] }
      }
    ]
  }
})
