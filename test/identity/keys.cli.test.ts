import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ansi, expectFailure, emptyDataDir, removeDataDirs, slow, svc, svcJson } from "../cli/helpers.js"

afterAll(removeDataDirs)

const everyScope = [
  "agents:read",
  "agents:execute",
  "agents:write",
  "flows:read",
  "flows:execute",
  "flows:write",
  "apps:read",
  "apps:execute",
  "apps:write",
  "knowledge:read",
  "knowledge:write",
  "end_users:read",
  "end_users:write"
]

let dataDir: string
beforeAll(async () => {
  dataDir = await emptyDataDir()
  await svcJson(["orgs", "create", "--slug", "acme"], dataDir)
  await svcJson(["members", "add", "--org", "acme", "--email", "kim@example.com", "--role", "member"], dataDir)
})

const listKeys = async () => (await svcJson(["keys", "list", "--org", "acme"], dataDir)).keys as Array<any>

describe("svc keys", slow, () => {
  it("creates organization and personal keys, lists them and revokes one", async () => {
    const org = await svcJson(["keys", "create", "--org", "acme", "--name", "ci", "--scopes", "knowledge:read, agents:read"], dataDir)
    expect(Object.keys(org.key).sort()).toEqual(["id", "kind", "prefix", "scopes", "secret"])
    expect(org.key).toMatchObject({ kind: "organization", scopes: ["knowledge:read", "agents:read"] })
    expect(org.key.secret).toMatch(/^svco_[0-9A-Za-z]{40}$/)
    expect(org.key.prefix).toBe(org.key.secret.slice(0, 12))

    const all = await svcJson(["keys", "create", "--org", "acme", "--name", "all", "--all-scopes"], dataDir)
    expect(all.key.scopes).toEqual(everyScope)

    const personal = await svcJson(
      ["keys", "create", "--org", "acme", "--name", "laptop", "--all-scopes", "--personal", "--member", "kim@example.com"],
      dataDir
    )
    expect(personal.key).toMatchObject({ kind: "personal", scopes: "all" })
    expect(personal.key.secret).toMatch(/^svcp_/)

    const keys = await listKeys()
    expect(keys.map((k) => k.id)).toEqual([org.key.id, all.key.id, personal.key.id])
    const listed = keys[2]
    expect(Object.keys(listed).sort()).toEqual(
      ["createdAt", "id", "kind", "lastUsedAt", "memberId", "name", "prefix", "revokedAt", "scopes"].sort()
    )
    expect(listed).toMatchObject({ name: "laptop", kind: "personal", scopes: "all", lastUsedAt: null, revokedAt: null })
    expect(listed.memberId).toEqual(expect.any(String))
    expect(keys[0].memberId).toBeNull()
    expect(JSON.stringify(keys)).not.toContain(org.key.secret)

    const revoked = await svcJson(["keys", "revoke", "--org", "acme", org.key.id], dataDir)
    expect(revoked).toEqual({ key: { ...keys[0], revokedAt: expect.any(String) }, alreadyRevoked: false })
    const again = await svcJson(["keys", "revoke", "--org", "acme", org.key.id], dataDir)
    expect(again.key.revokedAt).toBe(revoked.key.revokedAt)
    expect(again.alreadyRevoked).toBe(true)
    expect((await listKeys())[0].revokedAt).toBe(revoked.key.revokedAt)
  })

  it("says so when a key was already revoked, and exits 0 (revoking is idempotent)", async () => {
    const { key } = await svcJson(["keys", "create", "--org", "acme", "--name", "twice", "--scopes", "apps:read"], dataDir)
    const first = await svc(["keys", "revoke", "--org", "acme", key.id], dataDir)
    expect(first.code).toBe(0)
    expect(first.stdout.split("\n")[0]).toBe(`Revoked key 'twice' (${key.prefix}…)`)
    const second = await svc(["keys", "revoke", "--org", "acme", key.id], dataDir)
    expect(second.code).toBe(0)
    expect(second.stderr).toBe("")
    expect(second.stdout.split("\n")[0]).toBe(`Key 'twice' (${key.prefix}…) was already revoked; nothing changed`)
    expect(second.stdout).toMatch(/^revoked: +\d{4}-/m)
  })

  it("refuses bad option combinations as usage errors and writes nothing", async () => {
    const before = await listKeys()
    const create = ["keys", "create", "--org", "acme", "--name", "x"]
    const runs = await Promise.all([
      svc(create, dataDir),
      svc([...create, "--scopes", "knowledge:read", "--all-scopes"], dataDir),
      svc([...create, "--all-scopes", "--personal"], dataDir),
      svc([...create, "--all-scopes", "--member", "kim@example.com"], dataDir),
      svc(["keys", "create", "--org", "acme", "--all-scopes"], dataDir),
      svc(["keys", "revoke", "--org", "acme"], dataDir)
    ])
    const lines = runs.map((run) => expectFailure(run, 2))
    expect(lines[0]).toMatch(/--scopes/)
    expect(lines[2]).toMatch(/--member/)
    expect(await listKeys()).toEqual(before)
  })

  it("refuses unknown scopes, organizations, members and keys with exit 1 and writes nothing", async () => {
    const before = await listKeys()
    const runs = await Promise.all([
      svc(["keys", "create", "--org", "acme", "--name", "x", "--scopes", "knowledge:read,root"], dataDir),
      svc(["keys", "create", "--org", "acme", "--name", "x", "--all-scopes", "--personal", "--member", "nobody@example.com"], dataDir),
      svc(["keys", "create", "--org", "nope", "--name", "x", "--all-scopes"], dataDir),
      svc(["keys", "list", "--org", "nope"], dataDir),
      svc(["keys", "revoke", "--org", "acme", "00000000-0000-0000-0000-000000000000"], dataDir)
    ])
    const lines = runs.map((run) => expectFailure(run, 1))
    expect(lines[0]).toMatch(/'root'/)
    expect(lines[1]).toMatch(/nobody@example\.com/)
    expect(await listKeys()).toEqual(before)
  })

  it("prints the secret once with a warning, and a plain table, when not on a terminal", async () => {
    const created = await svc(["keys", "create", "--org", "acme", "--name", "shown", "--scopes", "apps:read"], dataDir)
    expect(created.code).toBe(0)
    expect(created.stdout).not.toMatch(ansi)
    expect(created.stdout).toMatch(/^Secret: svco_[0-9A-Za-z]{40}$/m)
    expect(created.stdout).toMatch(/will not be shown again/)
    const listed = await svc(["keys", "list", "--org", "acme"], dataDir)
    expect(listed.stdout).not.toMatch(ansi)
    const lines = listed.stdout.trimEnd().split("\n")
    const header = lines.findIndex((line) => line.startsWith("ID "))
    expect(lines[header]).toMatch(/^ID +NAME +KIND +PREFIX +SCOPES +CREATED +LAST USED +STATUS$/)
    expect(lines.slice(header + 1)).toHaveLength((await listKeys()).length)
    expect(listed.stdout).not.toMatch(/svco_[0-9A-Za-z]{40}/)
    expect(lines.at(-1)).toMatch(/ shown +organization +svco_\S+ +apps:read .* active$/)
  })
})
