import { defineConfig } from "vitest/config"

/**
 * The PostgreSQL half of the matrix: the directories run on both backends so far (issue 13; not yet
 * mcp, cli, docs, sdk, bench, package; SVC_TEST_PG_ALL=1 runs every test there, to see what else
 * passes), each test server on its own database cloned from a migrated template
 * (test/support/postgres.ts). The storage directory (many instances on one database) is pg only.
 */
const onPostgres = process.env.SVC_TEST_PG_ALL
  ? ["test/**/*.test.ts"]
  : ["http", "platform", "knowledge", "builder", "runtime", "runs", "provisioning", "portal", "webhooks", "storage"].map((dir) => `test/${dir}/**/*.test.ts`)

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    projects: [
      { extends: true, test: { name: "sqlite", include: ["test/**/*.test.ts"], exclude: ["test/storage/**"], env: { SVC_TEST_BACKEND: "sqlite" } } },
      {
        extends: true,
        test: { name: "pg", include: onPostgres, env: { SVC_TEST_BACKEND: "pg" }, globalSetup: ["test/support/postgres.ts"] }
      }
    ]
  }
})
