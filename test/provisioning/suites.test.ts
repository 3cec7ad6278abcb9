/**
 * Suites: `svc suites create` on the data directory of a running server; its Apps must be the
 * organization's (every problem named, nothing written), and a grant on the Suite names it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sql, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { expectFailure, svc, svcJson } from "../cli/helpers.js"
import { createTargets } from "./support.js"

let server: TestServer
let otherKey: string

beforeAll(async () => {
  server = await startTestServer()
  otherKey = await server.createOrganization("other")
  await svc(["orgs", "set", "other", "--enable", "apps,groups"], server.dataDir)
})
afterAll(() => server.stop())

const suiteRows = () => sql(server, (db) => db`SELECT (SELECT count(*) FROM suites) AS suites, (SELECT count(*) FROM suite_apps) AS apps`)

describe("svc suites create", () => {
  it("creates a Suite of the organization's Apps, in the order given", async () => {
    const first = (await createTargets(server)).appId
    const second = (await createTargets(server)).appId
    const created = await svcJson(["suites", "create", "--org", "default", "--name", " Everything ", "--app", second, "--app", first], server.dataDir)
    expect(created).toEqual({ suite: { id: expect.any(String), name: "Everything", appIds: [second, first] } })
    const rows = await sql(server, (db) => db`SELECT app_id, position FROM suite_apps WHERE suite_id = ${created.suite.id} ORDER BY position`)
    expect(rows).toEqual([
      { app_id: second, position: 0 },
      { app_id: first, position: 1 }
    ])
    const empty = await svcJson(["suites", "create", "--org", "default", "--name", "Empty"], server.dataDir)
    expect(empty.suite.appIds).toEqual([])
    const grant = await server.request("POST", "/user-groups", { body: { name: "Suite holders" } })
    const granted = await server.request("POST", `/user-groups/${grant.body.group.id}/grants`, { body: { targetKind: "suite", targetId: created.suite.id } })
    expect(granted.status).toBe(201)
  })

  it("prints a readable summary without --json", async () => {
    const app = (await createTargets(server)).appId
    const result = await svc(["suites", "create", "--org", "default", "--name", "Readable", "--app", app], server.dataDir)
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("Readable")
    expect(result.stdout).toContain(app)
  })

  it("refuses unknown, foreign, repeated and non-App ids and an empty name, naming each, writing nothing", async () => {
    const mine = await createTargets(server)
    const theirs = await createTargets(server, otherKey)
    const before = await suiteRows()
    const missing = unknownId()
    const line = expectFailure(
      await svc(
        ["suites", "create", "--org", "default", "--name", "Bad", "--app", mine.appId, "--app", missing, "--app", theirs.appId, "--app", mine.agentId, "--app", mine.appId],
        server.dataDir
      ),
      1
    )
    for (const problem of [`appIds[1]: no App '${missing}'`, `appIds[2]: no App '${theirs.appId}'`, `appIds[3]: no App '${mine.agentId}'`, "appIds[4]"]) {
      expect(line).toContain(problem)
    }
    expect(expectFailure(await svc(["suites", "create", "--org", "default", "--name", "  "], server.dataDir), 1)).toMatch(/name/)
    expectFailure(await svc(["suites", "create", "--org", "nope", "--name", "X"], server.dataDir), 1)
    expectFailure(await svc(["suites", "create", "--org", "default"], server.dataDir), 2)
    expect(await suiteRows()).toEqual(before)
    const json = await svc(["suites", "create", "--org", "default", "--name", "Bad", "--app", missing, "--json"], server.dataDir)
    expect(JSON.parse(json.stdout).error.code).toBe("invalid_request")
  })
})
