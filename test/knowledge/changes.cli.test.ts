import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { type CliEnv, expectFailure, removeDataDirs, slow, start, startProcess, svc } from "../cli/helpers.js"

let server: TestServer
let env: CliEnv
let knowledgebaseId: string
let otherId: string
const pageIds: Array<string> = []

const createKnowledgebase = async (name: string): Promise<string> => {
  const created = await server.request("POST", "/knowledgebases", { body: { name } })
  expect(created.status).toBe(201)
  return created.body.knowledgebase.id
}

const createPage = async (kb: string, title: string): Promise<string> => {
  const created = await server.request("POST", `/knowledgebases/${kb}/pages`, {
    body: { title, templateKey: "page", bodyMarkdown: `# ${title}\n\nSome text.\n` }
  })
  expect(created.status).toBeLessThan(300)
  return created.body.page.id
}

beforeAll(async () => {
  server = await startTestServer()
  env = { SVC_BASE_URL: server.baseUrl, SVC_API_KEY: server.key }
  knowledgebaseId = await createKnowledgebase("Followed")
  otherId = await createKnowledgebase("Elsewhere")
  for (const title of ["One", "Two", "Three"]) pageIds.push(await createPage(knowledgebaseId, title))
  await createPage(otherId, "Other")
})

afterAll(async () => {
  await server?.stop()
  await removeDataDirs()
})

/** Parses JSON Lines: one object per line. */
const jsonLines = (stdout: string): Array<any> => {
  expect(stdout === "" || stdout.endsWith("\n")).toBe(true)
  return stdout === "" ? [] : stdout.trimEnd().split("\n").map((line) => JSON.parse(line))
}

describe("svc changes tail", slow, () => {
  it("--once --json prints the feed as JSON Lines, following pages, and exits 0", async () => {
    const run = await svc(["changes", "tail", knowledgebaseId, "--once", "--json", "--limit", "2"], undefined, env)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toBe("")
    const changes = jsonLines(run.stdout)
    expect(changes.map((c) => c.id)).toEqual(pageIds)
    for (const change of changes) {
      expect(Object.keys(change).sort()).toEqual(["change", "changedAt", "id", "knowledgebaseId", "type"])
      expect(change).toMatchObject({ knowledgebaseId, type: "page", change: "created" })
    }
    const all = jsonLines((await svc(["changes", "tail", "all", "--once", "--json"], undefined, env)).stdout)
    expect(all.map((c) => c.knowledgebaseId)).toEqual([knowledgebaseId, knowledgebaseId, knowledgebaseId, otherId])
  })

  it("--since starts at a time, and people get one plain line per change", async () => {
    server.clock.advance(60_000)
    const since = new Date(server.clock.now()).toISOString()
    const later = await createPage(otherId, "Later")
    const run = await svc(["changes", "tail", "all", "--once", "--since", since], undefined, env)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toBe("")
    expect(run.stdout).toBe(`${since}  page   created  ${later}  kb ${otherId}\n`)
    const none = await svc(["changes", "tail", knowledgebaseId, "--once", "--since", since], undefined, env)
    expect(none).toEqual({ code: 0, stdout: "", stderr: "" })
  })

  it("follows new changes until asked to stop, then exits 0", async () => {
    const tail = start(["changes", "tail", knowledgebaseId, "--json", "--interval", "100"], undefined, env)
    await tail.waitFor((out) => out.split("\n").length > pageIds.length)
    const fresh = await createPage(knowledgebaseId, "Fresh")
    await tail.waitFor((out) => out.includes(fresh))
    const result = await tail.stop()
    expect(result.code).toBe(0)
    expect(result.stderr).toBe("")
    const changes = jsonLines(result.stdout)
    expect(changes.map((c) => c.id)).toEqual([...pageIds, fresh])
  })

  it("as a real process, stops on SIGINT and SIGTERM with exit 0", async () => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      const tail = startProcess(["changes", "tail", "all", "--interval", "100"], undefined, env)
      try {
        await tail.waitFor((out) => out.includes(pageIds[0]!))
        const result = await tail.stop(signal)
        expect(result.code).toBe(0)
        expect(result.stderr).toBe("")
      } finally {
        await tail.stop("SIGKILL")
      }
    }
  })

  it("refuses an unknown Knowledgebase (exit 1) and a bad --since or --interval (exit 2)", async () => {
    const unknown = await svc(["changes", "tail", "00000000-0000-4000-8000-000000000000", "--once"], undefined, env)
    expect(expectFailure(unknown, 1)).toMatch(/^svc: not_found: No Knowledgebase/)
    expect(expectFailure(await svc(["changes", "tail", "all", "--since", "yesterday"], undefined, env), 2)).toMatch(/date-time/)
    expectFailure(await svc(["changes", "tail", "all", "--interval", "0"], undefined, env), 2)
    expectFailure(await svc(["changes", "tail"], undefined, env), 2)
    const noKey = await svc(["changes", "tail", "all", "--once"], undefined, { SVC_BASE_URL: server.baseUrl })
    expect(expectFailure(noKey, 2)).toMatch(/no API key/)
  })
})
