import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ansi, expectFailure, emptyDataDir, removeDataDirs, slow, svc, svcJson } from "../cli/helpers.js"

afterAll(removeDataDirs)

let dataDir: string
beforeAll(async () => {
  dataDir = await emptyDataDir()
  await svcJson(["orgs", "create", "--slug", "acme"], dataDir)
})

describe("svc members", slow, () => {
  it("adds a member, changes the role, removes the member", async () => {
    const added = await svcJson(["members", "add", "--org", "acme", "--email", "ann@example.com", "--role", "viewer"], dataDir)
    expect(added).toEqual({ member: { id: expect.any(String), email: "ann@example.com", role: "viewer" } })
    const changed = await svcJson(["members", "set-role", "--org", "acme", "--email", "ann@example.com", "--role", "admin"], dataDir)
    expect(changed).toEqual({ member: { ...added.member, role: "admin" } })
    const removed = await svcJson(["members", "remove", "--org", "acme", "--email", "ann@example.com"], dataDir)
    expect(removed).toEqual({ ok: true, member: changed.member })
    expectFailure(await svc(["members", "remove", "--org", "acme", "--email", "ann@example.com"], dataDir), 1)
  })

  it("refuses an unknown role (exit 1) and writes nothing", async () => {
    expect(
      expectFailure(await svc(["members", "add", "--org", "acme", "--email", "bob@example.com", "--role", "owner"], dataDir), 1)
    ).toMatch(/role 'owner'/)
    await svcJson(["members", "add", "--org", "acme", "--email", "bob@example.com", "--role", "member"], dataDir)
    expectFailure(await svc(["members", "set-role", "--org", "acme", "--email", "bob@example.com", "--role", "owner"], dataDir), 1)
    const key = await svcJson(
      ["keys", "create", "--org", "acme", "--name", "k", "--all-scopes", "--personal", "--member", "bob@example.com"],
      dataDir
    )
    expect(key.key.kind).toBe("personal")
  })

  it("refuses unknown organizations, bad emails, duplicates and missing options", async () => {
    await svcJson(["members", "add", "--org", "acme", "--email", "dup@example.com", "--role", "member"], dataDir)
    const add = ["members", "add", "--org", "acme", "--email"]
    const [unknownOrg, badEmail, duplicate, noRole, noEmail, onlyOrg, ghost] = await Promise.all([
      svc(["members", "add", "--org", "nope", "--email", "c@example.com", "--role", "member"], dataDir),
      svc([...add, "not-an-email", "--role", "member"], dataDir),
      svc([...add, "dup@example.com", "--role", "member"], dataDir),
      svc([...add, "d@example.com"], dataDir),
      svc(["members", "set-role", "--org", "acme", "--role", "admin"], dataDir),
      // Without --org: the data directory's only organization, acme.
      svc(["members", "remove", "--email", "nobody@example.com"], dataDir),
      svc(["members", "set-role", "--org", "acme", "--email", "ghost@example.com", "--role", "admin"], dataDir)
    ])
    expect(expectFailure(unknownOrg!, 1)).toMatch(/nope/)
    expectFailure(badEmail!, 1)
    expect(expectFailure(duplicate!, 1)).toMatch(/already a member/)
    expect(expectFailure(noRole!, 2)).toMatch(/--role/)
    expect(expectFailure(noEmail!, 2)).toMatch(/--email/)
    expect(expectFailure(onlyOrg!, 1)).toBe("svc: No member 'nobody@example.com' in organization 'acme'.")
    expect(expectFailure(ghost!, 1)).toMatch(/ghost@example\.com/)
  })

  it("prints plain text when not on a terminal", async () => {
    const result = await svc(["members", "add", "--org", "acme", "--email", "eve@example.com", "--role", "admin"], dataDir)
    expect(result.code).toBe(0)
    expect(result.stdout).not.toMatch(ansi)
    expect(result.stdout).toMatch(/^email: +eve@example\.com$/m)
  })
})
