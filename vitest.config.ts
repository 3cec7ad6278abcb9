import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Starts the PostgreSQL cluster of the pg half of the matrix (SVC_TEST_BACKEND=pg); nothing on SQLite.
    globalSetup: ["test/support/postgres.ts"]
  }
})
