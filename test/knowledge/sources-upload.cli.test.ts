import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { ansi, type CliEnv, expectFailure, freshDataDir, parseOneDocument, removeDataDirs, repoRoot, slow, svc } from "../cli/helpers.js"

let server: TestServer
let env: CliEnv
let knowledgebaseId: string

beforeAll(async () => {
  server = await startTestServer()
  env = { SVC_BASE_URL: server.baseUrl, SVC_API_KEY: server.key }
  const created = await server.request("POST", "/knowledgebases", { body: { name: "Uploads" } })
  expect(created.status).toBe(201)
  knowledgebaseId = created.body.knowledgebase.id
})

afterAll(async () => {
  await server?.stop()
  await removeDataDirs()
})

const fixture = (name: string) => join(repoRoot, "fixtures", name)

const upload = (file: string, ...args: Array<string>) => svc(["sources", "upload", knowledgebaseId, file, ...args], undefined, env)

describe("svc sources upload", slow, () => {
  it.each([
    ["notes.txt", "txt"],
    ["guide.md", "md"],
    ["customers.csv", "csv"],
    ["handbook.pdf", "pdf"]
  ])("uploads %s through the API and waits until it is ready", async (name, type) => {
    const run = await upload(fixture(name), "--wait", "--json", "--poll-interval", "100")
    expect(run.code, run.stderr).toBe(0)
    const document = parseOneDocument(run.stdout)
    expect(Object.keys(document)).toEqual(["source", "status", "reviewPath", "deduplicated"])
    expect(document.status).toBe("ready")
    expect(document.reviewPath).toBeNull()
    expect(document.source).toMatchObject({ name, type, status: "ready", searchable: true, errorMessage: null, createdVia: "api" })
    expect(run.stderr).toBe("")

    const read = await server.request("GET", `/knowledgebases/${knowledgebaseId}/sources/${document.source.id}`)
    expect(read.body.source.status).toBe("ready")
  })

  it("exits 1 and prints the reason when indexing fails", async () => {
    const run = await upload(fixture("scanned.pdf"), "--wait", "--json", "--poll-interval", "100")
    expect(run.code).toBe(1)
    const document = parseOneDocument(run.stdout)
    expect(document.status).toBe("failed")
    expect(document.source.errorMessage).toEqual(expect.any(String))
    expect(run.stderr).toBe(`svc: source ${document.source.id} failed: ${document.source.errorMessage}\n`)
  })

  it("names and files the source, and without --wait answers while it is processing", async () => {
    const folder = await server.request("POST", `/knowledgebases/${knowledgebaseId}/pages`, {
      body: { title: "Policies", templateKey: "folder" }
    })
    expect(folder.status).toBeLessThan(300)
    const dir = freshDataDir()
    const file = join(dir, "refunds.md")
    writeFileSync(file, "# Refunds\n\nRefunds within 30 days, no questions asked.\n")
    const run = await upload(file, "--name", "Refund policy", "--folder", folder.body.page.id, "--json")
    expect(run.code, run.stderr).toBe(0)
    const document = parseOneDocument(run.stdout)
    expect(["processing", "ready"]).toContain(document.status)
    expect(document.source).toMatchObject({ name: "Refund policy", type: "md", parentPageId: folder.body.page.id })
  })

  it("prints plain fields for people when not on a terminal", async () => {
    const dir = freshDataDir()
    const file = join(dir, "plain.txt")
    writeFileSync(file, "A plain text file for the human output check.\n")
    const run = await upload(file, "--wait", "--poll-interval", "100")
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).not.toMatch(ansi)
    const lines = run.stdout.trimEnd().split("\n")
    expect(lines[0]).toBe("Uploaded plain.txt: ready and searchable")
    expect(lines).toContain("status:     ready")
    expect(lines).toContain("type:       txt")
    expect(lines.some((line) => /^id: +[0-9a-f-]{36}$/.test(line))).toBe(true)
    expect(run.stderr).not.toMatch(ansi)
    const progress = run.stderr.trimEnd().split("\n")
    expect(progress[0]).toBe("uploading plain.txt")
    expect(progress).toContain("uploaded plain.txt (46 B)")
    expect(progress.at(-1)).toBe("indexed plain.txt: ready")
  })

  it("refuses a file type the API does not take with exit 1, its code and message", async () => {
    const line = expectFailure(await upload(fixture("page.html"), "--json"), 1, true)
    expect(line).toMatch(/^svc: invalid_request: file: 'page\.html' is not a PDF, CSV, TXT or MD file\. \(request req_\w+\)$/)
  })

  it("refuses a missing file, an unknown Knowledgebase and a bad key with exit 1", async () => {
    const missing = await svc(["sources", "upload", knowledgebaseId, fixture("nope.txt")], undefined, env)
    expect(expectFailure(missing, 1)).toMatch(/^svc: cannot read .*nope\.txt: ENOENT/)
    const unknown = await svc(["sources", "upload", "00000000-0000-4000-8000-000000000000", fixture("notes.txt"), "--json"], undefined, env)
    expect(expectFailure(unknown, 1, true)).toMatch(/^svc: not_found: /)
    const badKey = await svc(["sources", "upload", knowledgebaseId, fixture("notes.txt"), "--api-key", "svco_nope", "--json"], undefined, {
      SVC_BASE_URL: server.baseUrl
    })
    expect(expectFailure(badKey, 1, true)).toMatch(/^svc: invalid_api_key: /)
    const human = await svc(["sources", "upload", knowledgebaseId, fixture("notes.txt"), "--api-key", "svco_nope"], undefined, {
      SVC_BASE_URL: server.baseUrl
    })
    expect(human.code).toBe(1)
    expect(human.stderr.trimEnd().split("\n").at(-1)).toMatch(/^svc: invalid_api_key: /)
  })

  it("says clearly when no API key is given (usage, exit 2)", async () => {
    const run = await svc(["sources", "upload", knowledgebaseId, fixture("notes.txt")], undefined, { SVC_BASE_URL: server.baseUrl })
    expect(expectFailure(run, 2)).toBe("svc: no API key: pass --api-key or set SVC_API_KEY.")
  })

  it("says clearly when the server cannot be reached", async () => {
    const args = ["sources", "upload", knowledgebaseId, fixture("notes.txt"), "--base-url", "http://127.0.0.1:9/api/v1", "--json"]
    const run = await svc(args, undefined, { SVC_API_KEY: server.key })
    expect(expectFailure(run, 1, true)).toMatch(/^svc: Could not reach http:\/\/127\.0\.0\.1:9/)
  })

  it("refuses missing arguments as usage errors", async () => {
    for (const args of [["sources"], ["sources", "upload"], ["sources", "upload", knowledgebaseId]]) {
      expectFailure(await svc(args, undefined, env), 2)
    }
  })
})

/** Bytes the organization already holds as a document: the API answers that document (under its first name) with `deduplicated: true`, and the CLI says so. */
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
