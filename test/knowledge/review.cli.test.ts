import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { jsonRequest } from "../support/server-process.js"
import { ansi, apiGet, expectFailure, freshDataDir, parseOneDocument, removeDataDirs, slow, svc, svcJson } from "../cli/helpers.js"

let server: TestServer | undefined
let dataDir: string
let baseUrl: string
let key: string
let knowledgebaseId: string

afterAll(async () => {
  await server?.stop()
  await removeDataDirs()
})

beforeAll(async () => {
  server = await startTestServer()
  dataDir = server.dataDir
  baseUrl = server.baseUrl
  key = server.key
  const gated = await svcJson(["orgs", "set", "default", "--enable", "review"], dataDir)
  expect(gated.organization.gates).toContain("review")
  const created = await apiPost("/knowledgebases", { name: "Handbook" })
  expect(created.status).toBe(201)
  knowledgebaseId = created.body.knowledgebase.id
}, 60_000)

const apiPost = (path: string, body: unknown): Promise<{ status: number; body: any }> => jsonRequest(baseUrl, key, "POST", path, body)

/** Creates a page over HTTP; the review gate holds it back. Returns the write's answer. */
const createPendingPage = async (title: string): Promise<any> => {
  const write = await apiPost(`/knowledgebases/${knowledgebaseId}/pages`, {
    title,
    templateKey: "page",
    bodyMarkdown: `# ${title}\n\nWritten by an agent.\n`
  })
  expect(write.status).toBe(202)
  expect(write.body.status).toBe("pending_review")
  expect(write.body.reviewPath).toBe(`/knowledgebases/${knowledgebaseId}/reviews/${write.body.revisionId}`)
  return write.body
}

const pageStatus = async (pageId: string): Promise<number> =>
  (await apiGet(baseUrl, `/knowledgebases/${knowledgebaseId}/pages/${pageId}`, key)).status

const listItems = async (): Promise<Array<any>> => (await svcJson(["review", "list", "--org", "default"], dataDir)).items

describe("svc review", slow, () => {
  it("lists a pending page write, and approving it makes the page live and empties the inbox", async () => {
    expect(await listItems()).toEqual([])
    const write = await createPendingPage("Refund policy")
    expect(await pageStatus(write.page.id)).toBe(404)

    const items = await listItems()
    expect(items).toHaveLength(1)
    expect(Object.keys(items[0]).sort()).toEqual(["author", "createdAt", "id", "kind", "knowledgebaseId", "pageId", "title"])
    expect(items[0]).toMatchObject({
      id: write.revisionId,
      kind: "page_create",
      knowledgebaseId,
      pageId: write.page.id,
      title: "Refund policy"
    })
    expect(items[0].createdAt).toEqual(expect.any(String))

    const approved = await svcJson(["review", "approve", "--org", "default", write.revisionId], dataDir)
    expect(Object.keys(approved)).toEqual(["item"])
    expect(Object.keys(approved.item).sort()).toEqual(["id", "page", "status"])
    expect(approved.item).toMatchObject({ id: write.revisionId, status: "applied" })
    expect(approved.item.page).toMatchObject({ id: write.page.id, knowledgebaseId, title: "Refund policy" })

    const read = await apiGet(baseUrl, `/knowledgebases/${knowledgebaseId}/pages/${write.page.id}`, key)
    expect(read.status).toBe(200)
    expect(read.body.page.markdown).toContain("Written by an agent.")
    expect(await listItems()).toEqual([])
  })

  it("rejecting a pending page write leaves the page unpublished and removes it from the inbox", async () => {
    const write = await createPendingPage("Draft pricing")
    expect((await listItems()).map((i) => i.id)).toEqual([write.revisionId])

    const rejected = await svcJson(["review", "reject", "--org", "default", write.revisionId], dataDir)
    expect(rejected).toEqual({ item: { id: write.revisionId, status: "rejected" } })

    expect(await pageStatus(write.page.id)).toBe(404)
    expect(await listItems()).toEqual([])
  })

  it("refuses unknown ids, settled items and unknown organizations with exit 1 and one line", async () => {
    const approvedOne = await createPendingPage("Shipping times")
    await svcJson(["review", "approve", "--org", "default", approvedOne.revisionId], dataDir)
    const rejectedOne = await createPendingPage("Old notes")
    await svcJson(["review", "reject", "--org", "default", rejectedOne.revisionId], dataDir)

    const unknown = "00000000-0000-0000-0000-000000000000"
    const runs = await Promise.all([
      svc(["review", "approve", "--org", "default", unknown], dataDir),
      svc(["review", "reject", "--org", "default", unknown], dataDir),
      svc(["review", "approve", "--org", "default", approvedOne.revisionId], dataDir),
      svc(["review", "reject", "--org", "default", approvedOne.revisionId], dataDir),
      svc(["review", "approve", "--org", "default", rejectedOne.revisionId, "--json"], dataDir),
      svc(["review", "list", "--org", "nope"], dataDir),
      svc(["review", "approve", "--org", "nope", approvedOne.revisionId], dataDir)
    ])
    const lines = runs.map((run, i) => expectFailure(run, 1, i === 4))
    expect(lines[0]).toContain(unknown)
    expect(lines[2]).toMatch(/already applied/)
    expect(lines[4]).toMatch(/already rejected/)
    expect(lines[5]).toMatch(/'nope'/)
    expect(await pageStatus(rejectedOne.page.id)).toBe(404)
    expect(await listItems()).toEqual([])
  })

  it("refuses missing options and arguments as usage errors", async () => {
    const runs = await Promise.all([
      svc(["review"], dataDir),
      svc(["review", "list", "--org"], dataDir),
      svc(["review", "approve", "--org", "default"], dataDir),
      svc(["review", "reject"], dataDir),
      svc(["review", "approve", "--org", "default", "a", "b"], dataDir)
    ])
    for (const run of runs) expectFailure(run, 2)
  })

  it("prints plain text without escape sequences when not on a terminal", async () => {
    const empty = await svc(["review", "list", "--org", "default"], dataDir)
    expect(empty.code).toBe(0)
    expect(empty.stderr).toBe("")
    expect(empty.stdout).toBe("Nothing is waiting for review.\n")

    const first = await createPendingPage("Onboarding")
    const second = await createPendingPage("Escalations")
    const listed = await svc(["review", "list", "--org", "default"], dataDir)
    expect(listed.code).toBe(0)
    expect(listed.stdout).not.toMatch(ansi)
    const lines = listed.stdout.trimEnd().split("\n")
    const header = lines.findIndex((line) => line.startsWith("ID "))
    expect(lines[header]).toMatch(/^ID +KIND +TITLE +AUTHOR +CREATED$/)
    expect(lines.slice(header + 1)).toHaveLength(2)
    expect(lines[header + 1]).toMatch(new RegExp(`^${first.revisionId} +page create +Onboarding +\\S.* +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d$`))
    expect(lines[header + 2]).toContain(second.revisionId)

    const approved = await svc(["review", "approve", "--org", "default", first.revisionId], dataDir)
    expect(approved.code).toBe(0)
    expect(approved.stdout).not.toMatch(ansi)
    expect(approved.stdout).toContain(first.page.id)
    const rejected = await svc(["review", "reject", "--org", "default", second.revisionId], dataDir)
    expect(rejected.code).toBe(0)
    expect(rejected.stdout).not.toMatch(ansi)
    expect(rejected.stdout).toContain(second.revisionId)
    expect(await pageStatus(first.page.id)).toBe(200)
    expect(await pageStatus(second.page.id)).toBe(404)
  })
})

describe("svc review of source uploads", slow, () => {
  const uploadPending = async (name: string, text: string): Promise<any> => {
    const dir = freshDataDir()
    const file = join(dir, name)
    writeFileSync(file, text)
    const run = await svc(["sources", "upload", knowledgebaseId, file, "--wait", "--json"], dataDir, { SVC_BASE_URL: baseUrl, SVC_API_KEY: key })
    expect(run.code, run.stderr).toBe(0)
    const uploaded = parseOneDocument(run.stdout)
    expect(uploaded.status).toBe("pending_review")
    expect(uploaded.reviewPath).toBe(`/knowledgebases/${knowledgebaseId}/reviews/${uploaded.source.id}`)
    return uploaded.source
  }

  const sourceRead = (sourceId: string) => apiGet(baseUrl, `/knowledgebases/${knowledgebaseId}/sources/${sourceId}`, key)

  it("lists an upload waiting for review; approving it starts indexing until it is ready", async () => {
    const source = await uploadPending("onboarding.md", "# Onboarding\n\nDay one: laptop, badge, coffee.\n")
    const items = await listItems()
    expect(items).toEqual([
      {
        id: source.id,
        kind: "source_upload",
        knowledgebaseId,
        sourceId: source.id,
        title: "onboarding.md",
        author: expect.any(String),
        createdAt: expect.any(String)
      }
    ])
    const human = await svc(["review", "list", "--org", "default"], dataDir)
    expect(human.stdout).toMatch(new RegExp(`^${source.id} +source upload +onboarding\\.md +`, "m"))

    const approved = await svcJson(["review", "approve", "--org", "default", source.id], dataDir)
    expect(Object.keys(approved.item).sort()).toEqual(["id", "source", "status"])
    expect(approved.item).toMatchObject({ id: source.id, status: "processing", source: { id: source.id, status: "processing" } })
    expect(await listItems()).toEqual([])

    let status = "processing"
    for (let i = 0; i < 100 && status === "processing"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      status = (await sourceRead(source.id)).body.source.status
    }
    expect(status).toBe("ready")
    const again = await svc(["review", "approve", "--org", "default", source.id], dataDir)
    expect(expectFailure(again, 1)).toMatch(/no longer waiting/)
  })

  it("rejecting an upload deletes it", async () => {
    const source = await uploadPending("draft.txt", "A draft nobody should search.\n")
    const rejected = await svcJson(["review", "reject", "--org", "default", source.id], dataDir)
    expect(rejected).toEqual({ item: { id: source.id, status: "deleted" } })
    expect((await sourceRead(source.id)).status).toBe(404)
    expect(await listItems()).toEqual([])

    const other = await uploadPending("scratch.txt", "Scratch notes.\n")
    const human = await svc(["review", "reject", "--org", "default", other.id], dataDir)
    expect(human.code).toBe(0)
    expect(human.stdout).toBe(`Rejected review item ${other.id}\nThe upload was deleted; it was never searchable.\n`)
    const gone = await svc(["review", "reject", "--org", "default", other.id], dataDir)
    expect(expectFailure(gone, 1)).toBe(`svc: No review item '${other.id}' in this organization.`)
  })
})
