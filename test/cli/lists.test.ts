/**
 * `svc orgs list`, `svc plans list`, `svc portals list` and `svc suites list` through the real
 * process; `--org` left out (the only organization, else bad usage naming the choices); the exit
 * codes `svc --help` states.
 */
import { afterAll, describe, expect, it } from "vitest"
import { onSqlite } from "../support/postgres.js"
import { emptyDataDir, expectEnvelope, expectFailure, parseOneDocument, removeDataDirs, slow, svcJson, svcProcess } from "./helpers.js"

afterAll(removeDataDirs)

/** `svc ...args --json` through the real process, expecting success and one document. */
const listed = async (args: ReadonlyArray<string>, dataDir: string) => {
  const result = await svcProcess([...args, "--json"], dataDir)
  expect(result.stderr).toBe("")
  expect(result.code).toBe(0)
  return parseOneDocument(result.stdout)
}

const uuid = expect.stringMatching(/^[0-9a-f-]{36}$/)

describe("list commands and --org", slow, () => {
  it("list organizations, plans, Portals and Suites, with --org or without it when there is one organization", async () => {
    const dataDir = await emptyDataDir()
    expect(await listed(["orgs", "list"], dataDir)).toEqual({ organizations: [] })
    await svcJson(["orgs", "create", "--slug", "shop", "--plan", "agency"], dataDir)
    const plan = (await svcJson(["plans", "create", "--org", "shop", "--name", "Gold", "--credits", "500"], dataDir)).tierPlan
    await svcJson(["plans", "archive", "--org", "shop", plan.id], dataDir)
    const portal = (await svcJson(["portals", "create", "--org", "shop", "--name", "Members"], dataDir)).portal
    const suite = (await svcJson(["suites", "create", "--org", "shop", "--name", "Everything"], dataDir)).suite

    expect(await listed(["orgs", "list"], dataDir)).toEqual({ organizations: [{ id: uuid, slug: "shop", name: "shop", plan: "agency" }] })
    for (const org of [["--org", "shop"], []]) {
      expect(await listed(["plans", "list", ...org], dataDir)).toEqual({
        tierPlans: [{ id: plan.id, name: "Gold", creditAllowance: 500, groupId: plan.groupId, archived: true }]
      })
      expect(await listed(["portals", "list", ...org], dataDir)).toEqual({ portals: [{ id: portal.id, name: "Members", createdAt: expect.any(String) }] })
      expect(await listed(["suites", "list", ...org], dataDir)).toEqual({ suites: [{ id: suite.id, name: "Everything", appIds: [] }] })
    }
    const keys = await listed(["keys", "create", "--name", "ci", "--all-scopes"], dataDir)
    expect((await listed(["keys", "list"], dataDir)).keys.map((key: { id: string }) => key.id)).toEqual([keys.key.id])

    const human = await svcProcess(["plans", "list"], dataDir)
    expect(human.code).toBe(0)
    expect(human.stdout).not.toMatch(/\u001b\[/)
    expect(human.stdout).toContain("1 plan in shop")
    expect(human.stdout).toMatch(/Gold\s+500\s+archived/)
  })

  it("with several organizations, a missing --org is bad usage (exit 2) naming them, and writes nothing", async () => {
    const dataDir = await emptyDataDir()
    await svcJson(["orgs", "create", "--slug", "beta"], dataDir)
    await svcJson(["orgs", "create", "--slug", "alpha"], dataDir)
    const plain = await svcProcess(["plans", "create", "--name", "Gold", "--credits", "5"], dataDir)
    expect(expectFailure(plain, 2)).toBe(`svc: pass --org: ${onSqlite ? dataDir : "the database"} holds 2 organizations (alpha, beta).`)
    const json = await svcProcess(["portals", "create", "--name", "P", "--json"], dataDir)
    expect(json.code).toBe(2)
    expect(expectEnvelope(json.stdout)).toEqual({ code: "invalid_usage", message: expect.stringContaining("(alpha, beta)") })
    expectFailure(await svcProcess(["keys", "list"], dataDir), 2)
    for (const org of ["alpha", "beta"]) {
      expect(await listed(["plans", "list", "--org", org], dataDir)).toEqual({ tierPlans: [] })
      expect(await listed(["portals", "list", "--org", org], dataDir)).toEqual({ portals: [] })
    }
  })

  it("with no organization, a missing --org is refused (exit 1), and an unknown one names it", async () => {
    const dataDir = await emptyDataDir()
    const none = await svcProcess(["suites", "list", "--json"], dataDir)
    expect(none.code).toBe(1)
    expect(expectEnvelope(none.stdout)).toEqual({ code: "no_organization", message: expect.stringContaining("svc orgs create") })
    expect(expectFailure(await svcProcess(["plans", "list", "--org", "nope"], dataDir), 1)).toBe("svc: No organization with slug 'nope'.")
    expect(await listed(["orgs", "list"], dataDir)).toEqual({ organizations: [] })
  })

  it("svc --help states the exit codes", async () => {
    const help = await svcProcess(["--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/Exit codes:\n\s+0\s+success\n\s+1\s+refused or failed[\s\S]*\n\s+2\s+bad usage/)
    expect(help.stdout).toMatch(/status\s/)
    expect(help.stdout).toMatch(/reset\s/)
  })
})
