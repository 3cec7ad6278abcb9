/**
 * `svc sources upload` of bytes the organization already holds as a document: the API answers that
 * document (under its first name) with `deduplicated: true`, and the CLI says so instead of
 * presenting it as a new upload under the asked-for name.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { type CliEnv, freshDataDir, parseOneDocument, removeDataDirs, slow, svc } from "./helpers.js"

let server: TestServer
let env: CliEnv
let knowledgebaseId: string

beforeAll(async () => {
  server = await startTestServer()
  env = { SVC_BASE_URL: server.baseUrl, SVC_API_KEY: server.key }
  const created = await server.request("POST", "/knowledgebases", { body: { name: "Deduplicated uploads" } })
  expect(created.status).toBe(201)
  knowledgebaseId = created.body.knowledgebase.id
})

afterAll(async () => {
  await server?.stop()
  removeDataDirs()
})

describe("svc sources upload of bytes already uploaded", slow, () => {
  it("says the document already existed, under its name, in JSON and for people", async () => {
    const dir = freshDataDir()
    const file = join(dir, "receipts.md")
    writeFileSync(file, `# Receipts\n\nKeep every expense receipt (${Math.random()}).\n`)
    const upload = (...args: Array<string>) => svc(["sources", "upload", knowledgebaseId, file, ...args], undefined, env)

    const first = await upload("--name", "Expense receipts", "--json")
    expect(first.code, first.stderr).toBe(0)
    const original = parseOneDocument(first.stdout)
    expect(original).toMatchObject({ deduplicated: false, source: { name: "Expense receipts" } })

    const again = await upload("--name", "Receipts again", "--json")
    expect(again.code, again.stderr).toBe(0)
    expect(parseOneDocument(again.stdout)).toMatchObject({ deduplicated: true, source: { id: original.source.id, name: "Expense receipts" } })

    const human = await upload("--name", "Receipts again")
    expect(human.code, human.stderr).toBe(0)
    const lines = human.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^Already uploaded as Expense receipts: (processing|ready)$/)
    expect(lines[1]).toBe(
      "These bytes were already a document named Expense receipts; that document is answered under its name, not as Receipts again."
    )
    expect(lines).toContain(`id:         ${original.source.id}`)
  })
})
