/**
 * A key revoked while requests with it are in flight (its credential cached and being looked up
 * again) fails on the very next request after the revoke commits, over HTTP.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import { createKeyRecord, expectError } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ server: { requestsPerMinute: 100_000 } })
})
afterAll(() => server.stop())

it("a key revoked during a stream of its requests fails on the very next one, and on every one after", async () => {
  for (let round = 0; round < 5; round++) {
    const { key, secret } = await createKeyRecord(server, { name: `busy ${round}`, scopes: "all" })
    expect((await server.request("GET", "/knowledgebases", { key: secret })).status).toBe(200)

    let revoked = false
    const afterRevoke: Array<Promise<number>> = []
    const stream = (async () => {
      while (!revoked) {
        await Promise.all(Array.from({ length: 4 }, () => server.request("GET", "/knowledgebases", { key: secret })))
      }
    })()
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.revokeKey("default", key.id)))
    revoked = true
    expectError(await server.request("GET", "/knowledgebases", { key: secret }), 401, "api_key_revoked")
    for (let i = 0; i < 8; i++) afterRevoke.push(server.request("GET", "/knowledgebases", { key: secret }).then((r) => r.status))
    await stream
    expect(await Promise.all(afterRevoke)).toEqual(Array.from({ length: 8 }, () => 401))
  }
})
