/**
 * The credentials cache survives the server's own commits to other tables (a Knowledgebase
 * created in between), yet a key revoked or a role changed shows on the very next request: from
 * another process (the real `svc` CLI), from another connection, and from the same process's own
 * writer (where the connection's `data_version` does not move and only the tables written tell).
 */
import { Effect } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { openAdmin } from "../../server/admin.js"
import { AccountsService } from "../../server/identity/service.js"
import { svcProcess } from "../cli/helpers.js"
import { createKeyRecord, expectError } from "../support/fixtures.js"
import { knownTestDatabase, startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ server: { requestsPerMinute: 100_000 } })
})
afterAll(() => server.stop())

const createKnowledgebase = (secret: string, name: string) =>
  server.request("POST", "/knowledgebases", { key: secret, body: { name } })

it("a key revoked by the svc CLI (another process) after the server's own commits fails on the very next request", async () => {
  const { key, secret } = await createKeyRecord(server, { name: "cli-revoked", scopes: "all" })
  expect((await server.request("GET", "/knowledgebases", { key: secret })).status).toBe(200)
  expect((await createKnowledgebase(secret, "made before the revoke")).status).toBe(201)
  expect((await server.request("GET", "/knowledgebases", { key: secret })).status).toBe(200)

  const revoked = await svcProcess(["keys", "revoke", "--org", "default", key.id, "--json"], server.dataDir)
  expect(revoked.code).toBe(0)
  expectError(await server.request("GET", "/knowledgebases", { key: secret }), 401, "api_key_revoked")
  expectError(await createKnowledgebase(secret, "after the revoke"), 401, "api_key_revoked")
})

it("a role lowered by the svc CLI shows on the very next request, and raised again through another connection too", async () => {
  await server.addMember("writer@example.com", "member")
  const secret = await server.createKey({ name: "personal", scopes: "all", personalFor: "writer@example.com" })
  expect((await createKnowledgebase(secret, "as a member")).status).toBe(201)
  expect((await server.request("GET", "/knowledgebases", { key: secret })).status).toBe(200)

  const lowered = await svcProcess(["members", "set-role", "--org", "default", "--role", "viewer", "--email", "writer@example.com", "--json"], server.dataDir)
  expect(lowered.code).toBe(0)
  expect((await createKnowledgebase(secret, "as a viewer")).status).toBe(403)
  expect((await server.request("GET", "/knowledgebases", { key: secret })).status).toBe(200)

  await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setMemberRole("default", "writer@example.com", "member")))
  expect((await createKnowledgebase(secret, "a member again")).status).toBe(201)
})

it("a key revoked and a role changed by the same process's writer show on its very next authentication", async () => {
  const admin = openAdmin({ dataDir: server.dataDir, database: knownTestDatabase(server.dataDir) })
  try {
    const outcome = await admin.run(
      Effect.gen(function* () {
        const accounts = yield* AccountsService
        yield* accounts.addMember("default", "same@example.com", "admin")
        const made = yield* accounts.createKey("default", { name: "same", scopes: "all", personalFor: "same@example.com" })
        const first = yield* accounts.authenticate(made.secret)
        const again = yield* accounts.authenticate(made.secret)
        yield* accounts.setMemberRole("default", "same@example.com", "viewer")
        const afterRole = yield* accounts.authenticate(made.secret)
        yield* accounts.revokeKey("default", made.key.id)
        const afterRevoke = yield* Effect.either(accounts.authenticate(made.secret))
        return {
          before: [first.scopes.has("knowledge:write"), again.scopes.has("knowledge:write")],
          afterRole: afterRole.scopes.has("knowledge:write"),
          afterRevoke: afterRevoke._tag === "Left" ? (afterRevoke.left as { code?: string }).code : "authenticated"
        }
      })
    )
    expect(outcome).toEqual({ before: [true, true], afterRole: false, afterRevoke: "api_key_revoked" })
  } finally {
    await admin.close()
  }
})
