/**
 * The hourly purge of stored idempotency answers, on a real database with Effect's `TestClock`
 * driving the schedule and a hand clock the store reads: answers stored after start-up are purged
 * once their 24 hours are over.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, TestClock, TestContext } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, expect, it } from "vitest"
import { AppClock } from "../../server/platform/clock.js"
import { IdempotencyStore } from "../../server/platform/idempotency.js"
import { DatabaseLive } from "../../server/platform/sql/database.js"
import { dropTestDatabase, ManualClock, testDatabaseFor } from "../support/server.js"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"

const hour = 60 * 60_000
const dataDirs: Array<string> = []
afterEach(async () => {
  for (const dir of dataDirs.splice(0)) {
    rmSync(dir, { recursive: true, force: true })
    await dropTestDatabase(dir)
  }
})

it("answers stored after start-up are purged by a later hourly run once they expire", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-purge-"))
  dataDirs.push(dataDir)
  const clock = new ManualClock()
  const layer = IdempotencyStore.Default.pipe(Layer.provideMerge(DatabaseLive(dataDir, await testDatabaseFor(dataDir))), Layer.provide(AppClock.from(clock.now)))

  const keysLeft = await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* IdempotencyStore
      const sql = yield* SqlClient.SqlClient
      const organization = "org-1"
      yield* sql`INSERT INTO organizations (id, slug, name, plan, credits_remaining, created_at)
        VALUES (${organization}, 'purge', 'Purge', 'pro', 0, '2026-11-21T12:00:00.000Z')`.pipe(writing(writesEveryTable))
      const storeAnswer = (key: string) =>
        store.once(
          { organizationId: organization, address: "POST /api/v1/knowledgebases", key, requestHash: "hash" },
          Effect.succeed({ status: 201, body: "{}" }),
          () => undefined
        )

      clock.advance(hour)
      yield* storeAnswer("made-after-start")
      clock.advance(23 * hour)
      yield* TestClock.adjust("23 hours")
      yield* storeAnswer("made-a-day-later")
      const beforeExpiry = yield* sql<{ key: string }>`SELECT key FROM idempotency_keys ORDER BY key`

      clock.advance(2 * hour)
      yield* TestClock.adjust("2 hours")
      const afterExpiry = yield* sql<{ key: string }>`SELECT key FROM idempotency_keys ORDER BY key`
      return { beforeExpiry: beforeExpiry.map((row) => row.key), afterExpiry: afterExpiry.map((row) => row.key) }
    }).pipe(Effect.provide(layer), Effect.scoped, Effect.provide(TestContext.TestContext))
  )

  expect(keysLeft.beforeExpiry).toEqual(["made-a-day-later", "made-after-start"])
  expect(keysLeft.afterExpiry).toEqual(["made-a-day-later"])
})
