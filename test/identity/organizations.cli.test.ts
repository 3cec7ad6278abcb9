import { afterAll, describe, expect, it } from "vitest"
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { ansi, emptyDataDir, expectEnvelope, expectFailure, freshDataDir, removeDataDirs, slow, svc, svcJson } from "../cli/helpers.js"
import { onSqlite } from "../support/postgres.js"

afterAll(removeDataDirs)

const uuid = /^[0-9a-f-]{36}$/

describe("svc orgs", slow, () => {
  it("creates an organization with defaults and shows it", async () => {
    const dataDir = await emptyDataDir()
    const created = await svcJson(["orgs", "create", "--slug", "acme"], dataDir)
    expect(created).toEqual({ organization: { id: expect.stringMatching(uuid), slug: "acme", name: "acme", plan: "pro" } })
    const shown = await svcJson(["orgs", "show", "acme"], dataDir)
    expect(shown).toEqual({
      organization: { ...created.organization, gates: [], credits: { remaining: 10_000, used: 0 } }
    })
  })

  it("takes --name and --plan", async () => {
    const dataDir = await emptyDataDir()
    const created = await svcJson(["orgs", "create", "--slug", "shop", "--name", "The Shop", "--plan", "trial"], dataDir)
    expect(created.organization).toMatchObject({ slug: "shop", name: "The Shop", plan: "trial" })
    const shown = await svcJson(["orgs", "show", "shop"], dataDir)
    expect(shown.organization.credits).toEqual({ remaining: 100, used: 0 })
  })

  it("round-trips plan, gates and credits through orgs show", async () => {
    const dataDir = await emptyDataDir()
    await svcJson(["orgs", "create", "--slug", "acme"], dataDir)
    const set = await svcJson(
      ["orgs", "set", "acme", "--plan", "agency", "--enable", "review,apps,mcp", "--credits", "42"],
      dataDir
    )
    expect(set.organization).toMatchObject({ plan: "agency", gates: ["apps", "mcp", "review"], credits: { remaining: 42, used: 0 } })
    expect(await svcJson(["orgs", "show", "acme"], dataDir)).toEqual(set)
    const disabled = await svcJson(["orgs", "set", "acme", "--disable", "mcp", "--enable", "groups"], dataDir)
    expect(disabled.organization.gates).toEqual(["apps", "groups", "review"])
    expect(disabled.organization.plan).toBe("agency")
    expect((await svcJson(["orgs", "show", "acme"], dataDir)).organization.gates).toEqual(["apps", "groups", "review"])
  })

  it("refuses bad input with exit 1 and one line, writing nothing", async () => {
    const dataDir = await emptyDataDir()
    expect(expectFailure(await svc(["orgs", "create", "--slug", "acme", "--plan", "gold"], dataDir), 1)).toMatch(/plan 'gold'/)
    expectFailure(await svc(["orgs", "show", "acme"], dataDir), 1)
    expectFailure(await svc(["orgs", "create", "--slug", "Not A Slug"], dataDir), 1)

    await svcJson(["orgs", "create", "--slug", "acme"], dataDir)
    const before = await svcJson(["orgs", "show", "acme"], dataDir)
    const [duplicate, plan, gate, both, negative, notANumber, unknown, unknownSet] = await Promise.all([
      svc(["orgs", "create", "--slug", "acme"], dataDir),
      svc(["orgs", "set", "acme", "--plan", "gold", "--credits", "5"], dataDir),
      svc(["orgs", "set", "acme", "--enable", "apps,teleport"], dataDir),
      svc(["orgs", "set", "acme", "--enable", "apps", "--disable", "apps"], dataDir),
      svc(["orgs", "set", "acme", "--credits", "-3"], dataDir),
      svc(["orgs", "set", "acme", "--credits", "many"], dataDir),
      svc(["orgs", "show", "nope"], dataDir),
      svc(["orgs", "set", "nope", "--credits", "1"], dataDir)
    ])
    expect(expectFailure(duplicate!, 1)).toMatch(/already exists/)
    expect(expectFailure(plan!, 1)).toMatch(/plan 'gold'/)
    expect(expectFailure(gate!, 1)).toMatch(/gate 'teleport'/)
    expectFailure(both!, 1)
    expectFailure(negative!, 1)
    expectFailure(notANumber!, 2)
    expect(expectFailure(unknown!, 1)).toBe("svc: No organization with slug 'nope'.")
    expect(expectFailure(unknownSet!, 1)).toMatch(/nope/)
    expect(await svcJson(["orgs", "show", "acme"], dataDir)).toEqual(before)
  })

  // About the data directory itself (its SQLite file), which a run on PostgreSQL does not use.
  it.runIf(onSqlite)("refuses a missing data directory and creates nothing: only svc serve creates one", async () => {
    const cwd = freshDataDir()
    const run = await svc(["orgs", "create", "--slug", "acme"], undefined, {}, cwd)
    expect(expectFailure(run, 1)).toBe(`svc: no data directory at ${join(cwd, ".svc")}; pass --data-dir (svc serve creates one there).`)
    expect(readdirSync(cwd)).toEqual([])

    const nested = join(freshDataDir(), "nested", "deeper")
    const json = await svc(["orgs", "show", "acme", "--data-dir", nested, "--json"])
    expectFailure(json, 1, true)
    expect(expectEnvelope(json.stdout)).toEqual({
      code: "no_data_directory",
      message: `no data directory at ${nested}; pass --data-dir (svc serve creates one there).`
    })
    expect(existsSync(nested)).toBe(false)

    const empty = freshDataDir()
    expect(expectFailure(await svc(["keys", "list", "--org", "default"], empty), 1)).toMatch(/^svc: no data directory at /)
    expect(readdirSync(empty)).toEqual([])
    expectFailure(await svc(["orgs", "show", "acme", "--data-dir", "/proc/svc-nope/data"]), 1)
  })

  it("refuses a missing required option or argument with exit 2", async () => {
    const dataDir = await emptyDataDir()
    const [noSlug, noShowSlug, noSetSlug, unknownOption] = await Promise.all([
      svc(["orgs", "create", "--name", "Acme"], dataDir),
      svc(["orgs", "show"], dataDir),
      svc(["orgs", "set"], dataDir),
      svc(["orgs", "create", "--slug", "acme", "--colour", "red"], dataDir)
    ])
    expect(expectFailure(noSlug!, 2)).toMatch(/--slug/)
    expectFailure(noShowSlug!, 2)
    expectFailure(noSetSlug!, 2)
    expect(expectFailure(unknownOption!, 2)).toMatch(/--colour/)
    expectFailure(await svc(["orgs", "show", "acme"], dataDir), 1)
  })

  it("prints key/value lines without escape sequences when not on a terminal", async () => {
    const dataDir = await emptyDataDir()
    const created = await svc(["orgs", "create", "--slug", "acme", "--name", "Acme"], dataDir)
    expect(created.code).toBe(0)
    expect(created.stdout).not.toMatch(ansi)
    expect(created.stdout).toMatch(/^slug: +acme$/m)
    const shown = await svc(["orgs", "show", "acme"], dataDir)
    expect(shown.stdout).not.toMatch(ansi)
    expect(shown.stdout).toMatch(/^plan: +pro$/m)
    expect(shown.stdout).toMatch(/^gates: +none$/m)
    expect(shown.stdout).toMatch(/^credits: +10,000 remaining, 0 used$/m)
    expect(shown.stderr).toBe("")
  })
})
