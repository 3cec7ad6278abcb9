import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { ansi, expectFailure, removeDataDirs, slow, svc, svcJson } from "../cli/helpers.js"

let server: TestServer
let knowledgebaseId: string
let keyId: string

beforeAll(async () => {
  server = await startTestServer()
  const created = await server.request("POST", "/knowledgebases", { body: { name: "Safety" } })
  knowledgebaseId = created.body.knowledgebase.id
  const page = await server.request("POST", `/knowledgebases/${knowledgebaseId}/pages`, {
    body: { title: "Road safety", templateKey: "page", bodyMarkdown: "# Road safety\n\nZebra crossing rules: cars stop, people cross.\n" }
  })
  expect(page.status).toBeLessThan(300)
  const keys = await svcJson(["keys", "list", "--org", "default"], server.dataDir)
  keyId = keys.keys.find((k: any) => k.name === "bootstrap").id
})

afterAll(async () => {
  await server?.stop()
  await removeDataDirs()
})

const search = async (query: string) => {
  const answer = await server.request("POST", `/knowledgebases/${knowledgebaseId}/search`, { body: { query, kinds: ["pages"] } })
  await server.flush()
  expect(answer.status).toBe(200)
  return answer.body
}

describe("svc keys activity", slow, () => {
  it("lists a key's searches as fingerprints, never the search text", async () => {
    const found = await search("zebra crossing")
    expect(found.results.length).toBeGreaterThan(0)
    await search("  Zebra   CROSSING ")
    const { activity } = await svcJson(["keys", "activity", "--org", "default", keyId], server.dataDir)
    const searches = activity.filter((a: any) => a.action === "search")
    expect(searches).toHaveLength(2)
    expect(Object.keys(searches[0]).sort()).toEqual(["action", "at", "connectionId", "kinds", "knowledgebaseId", "queryFingerprint", "resultCount", "results"])
    expect(searches[0]).toMatchObject({ knowledgebaseId, kinds: ["pages"], resultCount: found.results.length })
    expect(searches[0].queryFingerprint).toMatch(/^hmac-sha256:[0-9a-f]{16}$/)
    expect(searches[1].queryFingerprint).toBe(searches[0].queryFingerprint)
    expect(searches[0].results[0]).toMatchObject({ kind: "page", title: "Road safety" })
    expect(JSON.stringify(activity).toLowerCase()).not.toContain("zebra")

    const human = await svc(["keys", "activity", "--org", "default", keyId], server.dataDir)
    expect(human.code).toBe(0)
    expect(human.stderr).toBe("")
    expect(human.stdout).not.toMatch(ansi)
    expect(human.stdout.toLowerCase()).not.toContain("zebra")
    const lines = human.stdout.trimEnd().split("\n")
    const header = lines.findIndex((line) => line.startsWith("TIME "))
    expect(lines[header]).toMatch(/^TIME +ACTION +KNOWLEDGEBASE +FINGERPRINT +RESULTS$/)
    const row = lines[header + 1]!
    expect(row).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d +search +/)
    expect(row).toContain(knowledgebaseId)
    expect(row).toContain(searches[0].queryFingerprint)
    expect(row).toMatch(/\d+: Road safety/)
  })

  it("refuses a key of another organization or an unknown key with exit 1", async () => {
    await svcJson(["orgs", "create", "--slug", "acme"], server.dataDir)
    const other = await svcJson(["keys", "create", "--org", "acme", "--name", "ci", "--all-scopes"], server.dataDir)
    const foreign = await svc(["keys", "activity", "--org", "default", other.key.id], server.dataDir)
    expect(expectFailure(foreign, 1)).toBe(`svc: No key '${other.key.id}' in organization 'default' (see svc keys list --org default).`)
    const unknown = await svc(["keys", "activity", "--org", "default", "nope", "--json"], server.dataDir)
    expect(expectFailure(unknown, 1, true)).toMatch(/No key 'nope'/)
    expect(expectFailure(await svc(["keys", "activity", "--org", "nowhere", keyId], server.dataDir), 1)).toMatch(/'nowhere'/)
    expectFailure(await svc(["keys", "activity", keyId], server.dataDir), 2)
  })

  it("says when a key has no activity yet", async () => {
    const fresh = await svcJson(["keys", "create", "--org", "default", "--name", "idle", "--all-scopes"], server.dataDir)
    expect(await svcJson(["keys", "activity", "--org", "default", fresh.key.id], server.dataDir)).toEqual({ activity: [] })
    const human = await svc(["keys", "activity", "--org", "default", fresh.key.id], server.dataDir)
    expect(human.stdout).toBe(`No Knowledgebase activity of key ${fresh.key.id} yet.\n`)
  })
})

describe("svc memories add", slow, () => {
  it("adds a memory that the member's personal key finds and an organization key does not", async () => {
    await svcJson(["members", "add", "--org", "default", "--email", "ana@example.com", "--role", "member"], server.dataDir)
    const added = await svcJson(["memories", "add", "--org", "default", "--member", "ana@example.com", "Prefers quarterly invoices"], server.dataDir)
    expect(Object.keys(added)).toEqual(["memory"])
    expect(Object.keys(added.memory)).toEqual(["id", "text"])
    expect(added.memory).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), text: "Prefers quarterly invoices" })

    const personal = await svcJson(
      ["keys", "create", "--org", "default", "--name", "ana", "--all-scopes", "--personal", "--member", "ana@example.com"],
      server.dataDir
    )
    const found = await server.request("POST", "/knowledgebases/all/search", {
      key: personal.key.secret,
      body: { query: "quarterly invoices", kinds: ["memories"] }
    })
    expect(found.status).toBe(200)
    expect(found.body.results.map((r: any) => r.id)).toContain(added.memory.id)
    const asOrganization = await server.request("POST", "/knowledgebases/all/search", { body: { query: "quarterly invoices" } })
    expect(asOrganization.text).not.toContain(added.memory.id)

    const human = await svc(["memories", "add", "--org", "default", "--member", "ana@example.com", "Likes short calls"], server.dataDir)
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/^Added a memory for ana@example\.com in default\n/)
    expect(human.stdout).toContain("text:    Likes short calls")
  })

  it("refuses an unknown member, an empty text and missing options", async () => {
    const unknown = await svc(["memories", "add", "--org", "default", "--member", "nobody@example.com", "Hi"], server.dataDir)
    expect(expectFailure(unknown, 1)).toBe("svc: No member 'nobody@example.com' in organization 'default'.")
    const empty = await svc(["memories", "add", "--org", "default", "--member", "ana@example.com", "   "], server.dataDir)
    expect(expectFailure(empty, 1)).toMatch(/text: a memory is 1 to/)
    expectFailure(await svc(["memories", "add", "--org", "default", "Hi"], server.dataDir), 2)
    expectFailure(await svc(["memories", "add", "--org", "default", "--member", "ana@example.com"], server.dataDir), 2)
  })
})
