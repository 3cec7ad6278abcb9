/**
 * Source uploads over HTTP (`POST /knowledgebases/{id}/sources`), end to end through the ingestion
 * worker: JSON bodies (`contentMarkdown`, `contentText`), `multipart/form-data` with each fixture
 * file, search with citations, validation and limits (1 MB inline, 4.5 MB request), filing under
 * a folder or page, tenancy and scopes, `Idempotency-Key`, the plan cap on sources per
 * Knowledgebase, the organization-wide document (same bytes attach the same source), and reads.
 *
 * Every refusal is checked for side effects: the Knowledgebase's sources, counts and changes feed
 * read exactly as before, and no table an upload writes to gained a row.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, insertKnowledgebases, organizationWithPersonalKey, personalKey, setPlan, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { expectNoSourceRows, insertSources, sourceTableCounts } from "../support/source-rows.js"
import { accepted, documentHits, expectNothingWritten, fixtureBytes, fixtureSize, getSource, listSources, readSource, sourceFieldNames, uploadFixture, uploadForm, uploadJson, waitForSource } from "../support/sources.js"
import { isoPattern, uuidPattern } from "../support/patterns.js"

let server: TestServer
beforeAll(async () => {
  // Polling a source through the API takes many requests; the per-key rate limit is not under test here.
  server = await startTestServer({ server: { requestsPerMinute: 1_000_000 } })
})
afterAll(() => server.stop())

const now = () => new Date(server.clock.now()).toISOString()

let kbCounter = 0
/** A fresh Knowledgebase, inserted directly so the suite never meets the plan's cap on Knowledgebases. */
const newKnowledgebase = async (org = "default"): Promise<string> =>
  (await insertKnowledgebases(server, { org, count: 1, prefix: `Sources ${++kbCounter}` }))[0]!.id

let orgCounter = 0
/** A fresh Pro organization with an all-scopes organization key. */
const newOrganization = async () => {
  const slug = `sources-org-${++orgCounter}`
  return { slug, key: await server.createOrganization(slug) }
}

const knowledgebase = async (kb: string, key?: string) => {
  const response = await server.request("GET", `/knowledgebases/${kb}`, key === undefined ? {} : { key })
  expect(response.status).toBe(200)
  return response.body.knowledgebase
}
const changes = async (kb: string) => {
  const response = await server.request("GET", `/knowledgebases/${kb}/changes?limit=200`)
  expect(response.status).toBe(200)
  return response.body.changes as Array<any>
}
const createPage = async (kb: string, body: Record<string, unknown>, key?: string) => {
  const response = await server.request("POST", `/knowledgebases/${kb}/pages`, { body, ...(key === undefined ? {} : { key }) })
  expect(response.status).toBe(201)
  return response.body.page as { id: string }
}

/** Both "nothing written" checks: the Knowledgebase reads as before, and no source table changed. */
const refusedWithoutWrites = (kb: string, refuse: () => Promise<void>) =>
  expectNothingWritten(server, kb, () => expectNoSourceRows(server, refuse))

/** A unique markdown body (uploads of identical bytes attach the existing document). */
let bodyCounter = 0
const uniqueText = (words: string) => `${words}\n\nUpload number ${++bodyCounter} at ${Date.now()}.`

describe("POST /knowledgebases/{id}/sources with JSON", () => {
  it("contentMarkdown → 202 {status: processing, source (every field), reviewPath: null}; indexed to ready and searchable", async () => {
    const kb = await newKnowledgebase()
    const content = uniqueText("# Returns\n\nWithin 30 days, with the receipt. Ask for the zephyrine form.")
    const at = now()
    const response = await uploadJson(server, kb, { name: "Returns policy", contentMarkdown: content })
    expect(response.status).toBe(202)
    expect(response.headers.get("content-type")).toMatch(/^application\/json/)
    expect(response.body).toEqual({
      status: "processing",
      source: {
        id: expect.stringMatching(uuidPattern),
        name: "Returns policy",
        type: "md",
        status: "processing",
        searchable: false,
        disabled: false,
        url: null,
        updatedAt: at,
        createdAt: at,
        sizeBytes: Buffer.byteLength(content),
        errorMessage: null,
        createdVia: "api",
        parentPageId: null
      },
      reviewPath: null,
      deduplicated: false
    })
    expect(Object.keys(response.body.source)).toEqual([...sourceFieldNames])

    const id = response.body.source.id
    const ready = await waitForSource(server, kb, id)
    expect(ready).toEqual({
      ...response.body.source,
      status: "ready",
      searchable: true,
      updatedAt: expect.stringMatching(isoPattern)
    })

    const hits = await documentHits(server, kb, "zephyrine")
    expect(hits).toHaveLength(1)
    expect(hits[0]).toMatchObject({
      kind: "document",
      title: "Returns policy",
      snippet: expect.stringContaining("zephyrine"),
      citation: { kind: "document", knowledgebaseId: kb, sourceId: id, sourceName: "Returns policy", section: null }
    })

    expect(await listSources(server, kb)).toEqual([ready])
    const detail = await knowledgebase(kb)
    expect(detail.counts).toEqual({ sources: 1, pages: 0 })
    expect(detail.updatedAt).toBe(at)
    expect(detail.sources).toEqual([ready])
    expect(await changes(kb)).toEqual([
      { knowledgebaseId: kb, type: "source", id, change: "created", changedAt: ready.createdAt },
      { knowledgebaseId: kb, type: "source", id, change: "ready", changedAt: ready.updatedAt }
    ])
  })

  it("contentText → type txt, indexed to ready and found by search", async () => {
    const kb = await newKnowledgebase()
    const content = uniqueText("Plain words about the quillwort inventory.")
    const source = accepted(await uploadJson(server, kb, { name: "Inventory", contentText: content }))
    expect(source).toMatchObject({ type: "txt", sizeBytes: Buffer.byteLength(content), name: "Inventory" })
    expect(await waitForSource(server, kb, source.id)).toMatchObject({ status: "ready", searchable: true, errorMessage: null })
    const hits = await documentHits(server, kb, "quillwort")
    expect(hits.map((hit) => hit.citation.sourceId)).toEqual([source.id])
  })

  it("sizeBytes counts UTF-8 bytes, not characters; the name is trimmed", async () => {
    const kb = await newKnowledgebase()
    const content = uniqueText("Café ☕ in Zürich — 日本語")
    const source = accepted(await uploadJson(server, kb, { name: "  Café notes  ", contentText: content }))
    expect(source.sizeBytes).toBe(Buffer.byteLength(content, "utf8"))
    expect(source.sizeBytes).toBeGreaterThan(content.length)
    expect(source.name).toBe("Café notes")
    await waitForSource(server, kb, source.id)
  })

  it("a name of 200 characters is accepted", async () => {
    const kb = await newKnowledgebase()
    const source = accepted(await uploadJson(server, kb, { name: "n".repeat(200), contentText: uniqueText("long name") }))
    expect(source.name).toBe("n".repeat(200))
    await waitForSource(server, kb, source.id)
  })

  it.each([
    ["no content at all", { name: "Nothing" }, []],
    ["contentMarkdown and contentText", { name: "Two", contentMarkdown: "# a", contentText: "a" }, ["contentMarkdown", "contentText"]],
    ["contentMarkdown and url", { name: "Two", contentMarkdown: "# a", url: "https://example.com/a" }, ["contentMarkdown", "url"]],
    ["contentText and url", { name: "Two", contentText: "a", url: "https://example.com/a" }, ["contentText", "url"]],
    ["all three", { name: "Three", contentMarkdown: "# a", contentText: "a", url: "https://example.com/a" }, ["contentMarkdown", "contentText", "url"]]
  ])("exactly one of contentMarkdown, contentText or url: %s → 400 invalid_request, nothing written", async (_label, body, named) => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      const message = expectError(await uploadJson(server, kb, body), 400, "invalid_request")
      expect(message).toMatch(/exactly one/i)
      for (const field of named) expect(message).toContain(field)
    })
  })

  it("an unknown property → 400 invalid_request naming it (every one of them), nothing written", async () => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      expect(expectError(await uploadJson(server, kb, { name: "x", contentText: "a", colour: "red" }), 400, "invalid_request")).toContain(
        "colour"
      )
      const both = expectError(
        await uploadJson(server, kb, { name: "x", contentText: "a", colour: "red", bodyMarkdown: "b" }),
        400,
        "invalid_request"
      )
      expect(both).toContain("colour")
      expect(both).toContain("bodyMarkdown")
    })
  })

  it("inline content of exactly 1,000,000 bytes is accepted and indexed", async () => {
    const kb = await newKnowledgebase()
    const prefix = `Exactly one megabyte ${Date.now()} `
    const content = prefix + "lorem ipsum ".repeat(Math.floor((1_000_000 - prefix.length) / 12))
    const padded = content + "x".repeat(1_000_000 - Buffer.byteLength(content))
    expect(Buffer.byteLength(padded)).toBe(1_000_000)
    const source = accepted(await uploadJson(server, kb, { name: "Megabyte", contentText: padded }))
    expect(source.sizeBytes).toBe(1_000_000)
    expect(await waitForSource(server, kb, source.id, { timeoutMs: 60_000 })).toMatchObject({ status: "ready" })
  }, 90_000)

  it("inline content over 1 MB → 413 payload_too_large (bytes, not characters), nothing written", async () => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      expectError(await uploadJson(server, kb, { name: "Big", contentMarkdown: "a".repeat(1_000_001) }), 413, "payload_too_large")
      expectError(await uploadJson(server, kb, { name: "Big", contentText: "a".repeat(1_000_001) }), 413, "payload_too_large")
      // 500,001 characters, 1,000,002 bytes.
      expectError(await uploadJson(server, kb, { name: "Wide", contentText: "é".repeat(500_001) }), 413, "payload_too_large")
      // Over the whole request limit too.
      expectError(await uploadJson(server, kb, { name: "Huge", contentText: "a".repeat(4_600_000) }), 413, "payload_too_large")
    })
  })

  it("empty or blank content → 400 invalid_request, nothing written", async () => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      expectError(await uploadJson(server, kb, { name: "Empty", contentMarkdown: "" }), 400, "invalid_request")
      expectError(await uploadJson(server, kb, { name: "Blank", contentText: "  \n\t " }), 400, "invalid_request")
    })
  })

  it.each([
    ["an empty name", { name: "", contentText: "a" }],
    ["a blank name", { name: "   ", contentText: "a" }],
    ["no name", { contentText: "a" }],
    ["a name of 201 characters", { name: "n".repeat(201), contentText: "a" }],
    ["a name that is not a string", { name: 42, contentText: "a" }],
    ["a name that is null", { name: null, contentText: "a" }]
  ])("%s → 400 invalid_request naming `name`, nothing written", async (_label, body) => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      expect(expectError(await uploadJson(server, kb, body), 400, "invalid_request")).toContain("name")
    })
  })

  it.each([
    ["contentMarkdown that is not a string", { name: "x", contentMarkdown: 42 }, "contentMarkdown"],
    ["contentText that is not a string", { name: "x", contentText: ["a"] }, "contentText"],
    ["url that is not a string", { name: "x", url: 42 }, "url"],
    ["parentPageId that is not a string", { name: "x", contentText: "a", parentPageId: 7 }, "parentPageId"]
  ])("%s → 400 invalid_request naming the field, nothing written", async (_label, body, field) => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      expect(expectError(await uploadJson(server, kb, body), 400, "invalid_request")).toContain(field)
    })
  })

  it("a body that is not a JSON object, or not JSON at all → 400 invalid_request, nothing written", async () => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      expectError(await uploadJson(server, kb, "[]"), 400, "invalid_request")
      expectError(await uploadJson(server, kb, "null"), 400, "invalid_request")
      expectError(await uploadJson(server, kb, '"text"'), 400, "invalid_request")
      expectError(await uploadJson(server, kb, '{"name": "x", "contentText": '), 400, "invalid_request")
    })
  })

  it("application/json with a charset parameter is JSON", async () => {
    const kb = await newKnowledgebase()
    const response = await uploadJson(server, kb, JSON.stringify({ name: "Charset", contentText: uniqueText("charset") }), {
      headers: { "content-type": "application/json; charset=utf-8" }
    })
    await waitForSource(server, kb, accepted(response).id)
  })

  it("a text/plain (or other non-JSON, non-multipart) body → 400 invalid_request, nothing written", async () => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      const path = `/knowledgebases/${kb}/sources`
      for (const contentType of ["text/plain", "text/markdown", "application/octet-stream", "application/x-www-form-urlencoded"]) {
        const response = await server.request("POST", path, {
          body: contentType.includes("form") ? "name=x&contentText=a" : "# Hello\n\nplain body",
          headers: { "content-type": contentType }
        })
        expectError(response, 400, "invalid_request")
      }
    })
  })

  describe("parentPageId", () => {
    it("a folder of the same Knowledgebase: the source is filed there", async () => {
      const kb = await newKnowledgebase()
      const folder = await createPage(kb, { title: "Policies", templateKey: "folder" })
      const source = accepted(
        await uploadJson(server, kb, { name: "Filed", contentText: uniqueText("filed in a folder"), parentPageId: folder.id })
      )
      expect(source.parentPageId).toBe(folder.id)
      expect(await waitForSource(server, kb, source.id)).toMatchObject({ status: "ready", parentPageId: folder.id })
      expect((await listSources(server, kb))[0].parentPageId).toBe(folder.id)
    })

    it("a page of the same Knowledgebase: the source is filed under it", async () => {
      const kb = await newKnowledgebase()
      const page = await createPage(kb, { title: "Onboarding", bodyMarkdown: "Read the attachments." })
      const source = accepted(
        await uploadJson(server, kb, { name: "Under a page", contentMarkdown: uniqueText("# under a page"), parentPageId: page.id })
      )
      expect(source.parentPageId).toBe(page.id)
      await waitForSource(server, kb, source.id)
    })

    it("null leaves the source unfiled", async () => {
      const kb = await newKnowledgebase()
      const source = accepted(await uploadJson(server, kb, { name: "Unfiled", contentText: uniqueText("unfiled"), parentPageId: null }))
      expect(source.parentPageId).toBeNull()
      await waitForSource(server, kb, source.id)
    })

    it("an unknown page, a page of another Knowledgebase or of another organization → 404 not_found, nothing written", async () => {
      const kb = await newKnowledgebase()
      const other = await newKnowledgebase()
      const elsewhere = await createPage(other, { title: "Elsewhere", templateKey: "folder" })
      const org = await newOrganization()
      const foreignKb = await newKnowledgebase(org.slug)
      const foreign = await createPage(foreignKb, { title: "Foreign", templateKey: "folder" }, org.key)
      await refusedWithoutWrites(kb, async () => {
        for (const parentPageId of [unknownId(), elsewhere.id, foreign.id]) {
          const message = expectError(
            await uploadJson(server, kb, { name: "Misfiled", contentText: uniqueText("misfiled"), parentPageId }),
            404,
            "not_found"
          )
          expect(message).toContain("parentPageId")
        }
      })
      expect((await knowledgebase(other)).counts.sources).toBe(0)
    })
  })

  describe("the Knowledgebase", () => {
    it("an unknown Knowledgebase (or `all`, or not a uuid) → 404 not_found, nothing written", async () => {
      await expectNoSourceRows(server, async () => {
        for (const kb of [unknownId(), "all", "not-a-uuid"]) {
          expectError(await uploadJson(server, kb, { name: "Nowhere", contentText: uniqueText("nowhere") }), 404, "not_found")
          expectError(await uploadFixture(server, kb, "notes.txt"), 404, "not_found")
        }
      })
    })

    it("another organization's Knowledgebase → 404 not_found, and that Knowledgebase is untouched", async () => {
      const org = await newOrganization()
      const theirs = await newKnowledgebase(org.slug)
      await expectNothingWritten(
        server,
        theirs,
        () =>
          expectNoSourceRows(server, async () => {
            expectError(await uploadJson(server, theirs, { name: "Intruder", contentText: uniqueText("intruder") }), 404, "not_found")
            expectError(await uploadFixture(server, theirs, "guide.md"), 404, "not_found")
          }),
        { key: org.key }
      )
    })
  })

  describe("authorization", () => {
    it("a key without knowledge:write → 403 insufficient_scope, nothing written; it can still read", async () => {
      const kb = await newKnowledgebase()
      const readOnly = await server.createKey({ name: "reader", scopes: ["knowledge:read"] })
      await refusedWithoutWrites(kb, async () => {
        expectError(await uploadJson(server, kb, { name: "x", contentText: uniqueText("x") }, { key: readOnly }), 403, "insufficient_scope")
        expectError(await uploadFixture(server, kb, "notes.txt", { key: readOnly }), 403, "insufficient_scope")
      })
      expect((await server.request("GET", `/knowledgebases/${kb}/sources`, { key: readOnly })).status).toBe(200)
    })

    it("a key with other scopes only → 403 insufficient_scope, even for a refused body", async () => {
      const kb = await newKnowledgebase()
      const agents = await server.createKey({ name: "agents only", scopes: ["agents:read", "agents:write"] })
      await refusedWithoutWrites(kb, async () => {
        expectError(await uploadJson(server, kb, { name: "x", contentText: uniqueText("x") }, { key: agents }), 403, "insufficient_scope")
        expectError(await uploadJson(server, kb, { bogus: true }, { key: agents }), 403, "insufficient_scope")
      })
    })

    it("a personal key of a viewer → 403 insufficient_scope; of a member → 202", async () => {
      const kb = await newKnowledgebase()
      const viewer = await personalKey(server, { email: "viewer@sources.test", role: "viewer" })
      const member = await personalKey(server, { email: "member@sources.test", role: "member" })
      await refusedWithoutWrites(kb, async () => {
        expectError(await uploadJson(server, kb, { name: "x", contentText: uniqueText("x") }, { key: viewer }), 403, "insufficient_scope")
      })
      const source = accepted(await uploadJson(server, kb, { name: "By a member", contentText: uniqueText("member") }, { key: member }))
      expect(source.createdVia).toBe("api")
      await waitForSource(server, kb, source.id)
    })

    it("no key → 401 unauthorized; an unknown key → 401 invalid_api_key; nothing written", async () => {
      const kb = await newKnowledgebase()
      await refusedWithoutWrites(kb, async () => {
        expectError(await uploadJson(server, kb, { name: "x", contentText: "a" }, { key: null }), 401, "unauthorized")
        expectError(await uploadJson(server, kb, { name: "x", contentText: "a" }, { key: "svco_unknown" }), 401, "invalid_api_key")
      })
    })
  })
})

describe("POST /knowledgebases/{id}/sources with multipart/form-data", () => {
  const fixtures = [
    { file: "handbook.pdf", type: "pdf" },
    { file: "customers.csv", type: "csv" },
    { file: "notes.txt", type: "txt" },
    { file: "guide.md", type: "md" }
  ] as const

  it.each(fixtures)("$file → 202 processing, type $type, sizeBytes the file's size, name the file's name; then ready", async ({ file, type }) => {
    // A fresh organization: the same bytes uploaded again in one organization attach the existing document.
    const { slug, key } = await newOrganization()
    const kb = await newKnowledgebase(slug)
    const at = now()
    const response = await uploadFixture(server, kb, file, { key })
    expect(response.status).toBe(202)
    expect(response.body).toEqual({
      status: "processing",
      source: {
        id: expect.stringMatching(uuidPattern),
        name: file,
        type,
        status: "processing",
        searchable: false,
        disabled: false,
        url: null,
        updatedAt: at,
        createdAt: at,
        sizeBytes: fixtureSize(file),
        errorMessage: null,
        createdVia: "api",
        parentPageId: null
      },
      reviewPath: null,
      deduplicated: false
    })
    const ready = await waitForSource(server, kb, response.body.source.id, { key })
    expect(ready).toMatchObject({ status: "ready", searchable: true, errorMessage: null, type, sizeBytes: fixtureSize(file), name: file })
    expect((await knowledgebase(kb, key)).counts.sources).toBe(1)
  })

  it("a `name` part overrides the file's name; a `parentPageId` part files it", async () => {
    const kb = await newKnowledgebase()
    const folder = await createPage(kb, { title: "Handbooks", templateKey: "folder" })
    // Different bytes from the other tests' handbook.pdf would attach the same document: use a fresh org-wide file.
    const bytes = new TextEncoder().encode(uniqueText("# Named upload\n\nThe name part wins."))
    const response = await uploadForm(server, kb, [
      { field: "file", file: { name: "upload.md", bytes } },
      { field: "name", value: "  Field handbook  " },
      { field: "parentPageId", value: folder.id }
    ])
    const source = accepted(response)
    expect(source).toMatchObject({ name: "Field handbook", type: "md", parentPageId: folder.id, sizeBytes: bytes.byteLength })
    expect(await waitForSource(server, kb, source.id)).toMatchObject({ status: "ready", name: "Field handbook", parentPageId: folder.id })
  })

  describe("search over the four fixtures", () => {
    let kb: string
    let key: string
    const ids: Record<string, string> = {}
    beforeAll(async () => {
      const org = await newOrganization()
      key = org.key
      kb = await newKnowledgebase(org.slug)
      for (const { file } of fixtures) ids[file] = accepted(await uploadFixture(server, kb, file, { key })).id
      for (const { file } of fixtures) expect(await waitForSource(server, kb, ids[file]!, { key })).toMatchObject({ status: "ready" })
    })

    const hitFor = async (query: string, file: string) => {
      const hits = await documentHits(server, kb, query, { key })
      const hit = hits.find((candidate) => candidate.citation.sourceId === ids[file])
      expect(hit, `a hit for "${query}" in ${file}: ${JSON.stringify(hits)}`).toBeDefined()
      expect(hit).toMatchObject({
        kind: "document",
        title: file,
        citation: { kind: "document", knowledgebaseId: kb, sourceId: ids[file], sourceName: file }
      })
      return hit
    }

    it("handbook.pdf: a phrase is found, cited with the source and a page section", async () => {
      const hit = await hitFor("mileage", "handbook.pdf")
      expect(hit.snippet).toMatch(/mileage/i)
      expect(hit.citation.section).toMatch(/^page \d+$/)
    })

    it("handbook.pdf: the citation names the page the phrase is on (page 1, 2 and 3)", async () => {
      expect((await hitFor("allowance", "handbook.pdf")).citation.section).toBe("page 1")
      expect((await hitFor("mileage", "handbook.pdf")).citation.section).toBe("page 2")
      expect((await hitFor("duty manager", "handbook.pdf")).citation.section).toBe("page 3")
    })

    it("customers.csv: a row is found, cited with its block of rows (rows a–b)", async () => {
      const first = await hitFor("Liskov", "customers.csv")
      expect(first.citation.section).toBe("rows 1–20")
      const later = await hitFor("Wirth", "customers.csv")
      expect(later.citation.section).toBe("rows 21–30")
      expect(later.snippet).toContain("Wirth")
    })

    it("notes.txt: a phrase is found, cited with the source (no section)", async () => {
      const hit = await hitFor("handover", "notes.txt")
      expect(hit.snippet).toMatch(/handover/i)
      expect(hit.citation.section).toBeNull()
    })

    it("guide.md: a phrase is found, cited with the source (no section)", async () => {
      const hit = await hitFor("troubleshooting", "guide.md")
      expect(hit.citation.section).toBeNull()
    })

    it("accented text is found whatever the fixture (NFC): Zürich is in notes.txt and customers.csv", async () => {
      const hits = await documentHits(server, kb, "Zürich", { key })
      expect(new Set(hits.map((hit) => hit.citation.sourceName))).toEqual(new Set(["notes.txt", "customers.csv"]))
    })
  })

  it.each([
    ["scanned.pdf", /no (extractable )?text/i],
    ["encrypted.pdf", /encrypted|password/i],
    ["broken.pdf", /corrupt|truncated|could not be read/i]
  ])("%s → 202, then failed with a clear errorMessage; not searchable", async (file, reason) => {
    const kb = await newKnowledgebase()
    const source = accepted(await uploadFixture(server, kb, file, { name: `${file} ${++bodyCounter}` }))
    const failed = await waitForSource(server, kb, source.id)
    expect(failed).toMatchObject({ status: "failed", searchable: false, type: "pdf", sizeBytes: fixtureSize(file) })
    expect(failed.errorMessage).toMatch(reason)
    expect(failed.errorMessage!.length).toBeGreaterThan(10)
    expect(await changes(kb)).toEqual([
      expect.objectContaining({ type: "source", id: source.id, change: "created" }),
      expect.objectContaining({ type: "source", id: source.id, change: "failed" })
    ])
  })

  it("a .txt that is not UTF-8 text → failed, errorMessage about the encoding", async () => {
    const kb = await newKnowledgebase()
    const bytes = Uint8Array.from([0x48, 0x69, 0x20, 0xff, 0xfe, 0x00, 0x41, Date.now() % 256, 0x0a])
    const source = accepted(await uploadForm(server, kb, [{ field: "file", file: { name: "latin.txt", bytes } }]))
    const failed = await waitForSource(server, kb, source.id)
    expect(failed.status).toBe("failed")
    expect(failed.errorMessage).toMatch(/UTF-8|not text/i)
  })

  it("a failed document does not absorb a later upload of the same bytes: a new source is made", async () => {
    const kb = await newKnowledgebase()
    const first = accepted(await uploadFixture(server, kb, "scanned.pdf", { name: "Scan one" }))
    expect((await waitForSource(server, kb, first.id)).status).toBe("failed")
    const second = accepted(await uploadFixture(server, kb, "scanned.pdf", { name: "Scan two" }))
    expect(second.id).not.toBe(first.id)
    expect((await waitForSource(server, kb, second.id)).status).toBe("failed")
    expect((await knowledgebase(kb)).counts.sources).toBe(2)
  })

  it.each([
    ["REPORT.TXT", "application/octet-stream", "txt"],
    ["readme.markdown", "text/plain", "md"],
    ["table.tsv", "text/plain", "csv"],
    ["export", "text/csv", "csv"],
    ["letter", "text/plain", "txt"]
  ])("type detection: %s sent as %s → %s", async (name, contentType, type) => {
    const kb = await newKnowledgebase()
    const text = type === "csv" ? `a${name.endsWith(".tsv") ? "\t" : ","}b\n1${name.endsWith(".tsv") ? "\t" : ","}${++bodyCounter}\n` : uniqueText("detected")
    const source = accepted(
      await uploadForm(server, kb, [{ field: "file", file: { name, bytes: new TextEncoder().encode(text), type: contentType } }])
    )
    expect(source.type).toBe(type)
    expect(source.name).toBe(name)
    expect((await waitForSource(server, kb, source.id)).status).toBe("ready")
  })

  it.each([
    ["tool.exe", "application/octet-stream"],
    ["report.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
    ["page.html", "text/html"],
    ["picture.png", "image/png"],
    ["archive", "application/zip"]
  ])("an unsupported file (%s, %s) → 400 invalid_request naming it, nothing written", async (name, type) => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      const message = expectError(
        await uploadForm(server, kb, [{ field: "file", file: { name, bytes: new Uint8Array([1, 2, 3, 4]), type } }]),
        400,
        "invalid_request"
      )
      expect(message).toContain(name)
    })
  })

  it("no file part → 400 invalid_request naming `file`; a `file` text field is no file either; nothing written", async () => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      expect(expectError(await uploadForm(server, kb, [{ field: "name", value: "No file" }]), 400, "invalid_request")).toContain("file")
      expect(expectError(await uploadForm(server, kb, []), 400, "invalid_request")).toContain("file")
      expect(expectError(await uploadForm(server, kb, [{ field: "file", value: "just text" }]), 400, "invalid_request")).toContain("file")
    })
  })

  it("an unknown form field → 400 invalid_request naming it, nothing written", async () => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      const message = expectError(
        await uploadForm(server, kb, [
          { field: "file", file: { name: "notes.txt", bytes: fixtureBytes("notes.txt") } },
          { field: "colour", value: "red" }
        ]),
        400,
        "invalid_request"
      )
      expect(message).toContain("colour")
      const fileField = expectError(
        await uploadForm(server, kb, [
          { field: "file", file: { name: "notes.txt", bytes: fixtureBytes("notes.txt") } },
          { field: "attachment", file: { name: "more.txt", bytes: new TextEncoder().encode("more") } }
        ]),
        400,
        "invalid_request"
      )
      expect(fileField).toContain("attachment")
    })
  })

  it("two file parts → 400 invalid_request, nothing written", async () => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      expectError(
        await uploadForm(server, kb, [
          { field: "file", file: { name: "notes.txt", bytes: fixtureBytes("notes.txt") } },
          { field: "file", file: { name: "guide.md", bytes: fixtureBytes("guide.md") } }
        ]),
        400,
        "invalid_request"
      )
    })
  })

  it("an empty file → 400 invalid_request, nothing written", async () => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      expect(
        expectError(await uploadForm(server, kb, [{ field: "file", file: { name: "empty.txt", bytes: new Uint8Array() } }]), 400, "invalid_request")
      ).toContain("file")
      expectError(await uploadForm(server, kb, [{ field: "file", file: { name: "empty.pdf", bytes: new Uint8Array() } }]), 400, "invalid_request")
    })
  })

  it("an empty `name` part → 400 invalid_request, nothing written", async () => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      expect(
        expectError(
          await uploadForm(server, kb, [
            { field: "file", file: { name: "notes.txt", bytes: fixtureBytes("notes.txt") } },
            { field: "name", value: "   " }
          ]),
          400,
          "invalid_request"
        )
      ).toContain("name")
    })
  })

  it("a `parentPageId` part naming no page of this Knowledgebase → 404 not_found, nothing written", async () => {
    const kb = await newKnowledgebase()
    const other = await newKnowledgebase()
    const elsewhere = await createPage(other, { title: "Elsewhere", templateKey: "folder" })
    await refusedWithoutWrites(kb, async () => {
      for (const parentPageId of [unknownId(), elsewhere.id]) {
        expectError(await uploadFixture(server, kb, "notes.txt", { parentPageId }), 404, "not_found")
      }
    })
  })

  it("a body over 4.5 MB → 413 payload_too_large, nothing written", async () => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      const big = new TextEncoder().encode("a ".repeat(2_300_000))
      expect(big.byteLength).toBe(4_600_000)
      expectError(await uploadForm(server, kb, [{ field: "file", file: { name: "big.txt", bytes: big } }]), 413, "payload_too_large")
      // The file alone fits, the whole body does not.
      const almost = new TextEncoder().encode("b ".repeat(2_249_950))
      expectError(
        await uploadForm(server, kb, [
          { field: "file", file: { name: "almost.txt", bytes: almost } },
          { field: "name", value: "n".repeat(190) }
        ]),
        413,
        "payload_too_large"
      )
    })
  })

  it("a file of 4.4 MB fits the request limit: accepted and indexed", async () => {
    const kb = await newKnowledgebase()
    const words = `unique${Date.now()} alpha beta gamma delta epsilon\n`
    const bytes = new TextEncoder().encode(words.repeat(Math.floor(4_400_000 / words.length)))
    const source = accepted(await uploadForm(server, kb, [{ field: "file", file: { name: "large.txt", bytes } }]))
    expect(source.sizeBytes).toBe(bytes.byteLength)
    expect(await waitForSource(server, kb, source.id, { timeoutMs: 60_000 })).toMatchObject({ status: "ready", searchable: true })
  }, 90_000)

  it("a multipart body that cannot be read (no parts, or cut off before the closing boundary) → 400 invalid_request, nothing written", async () => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      const path = `/knowledgebases/${kb}/sources`
      const headers = { "content-type": "multipart/form-data; boundary=xyz" }
      expectError(await server.request("POST", path, { body: "this is not multipart", headers }), 400, "invalid_request")
      const truncated = '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello'
      expectError(await server.request("POST", path, { body: truncated, headers }), 400, "invalid_request")
    })
  })

  it("multipart/form-data without a boundary parameter → 400 invalid_request (a malformed request, not a server fault), nothing written", async () => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      const response = await server.request("POST", `/knowledgebases/${kb}/sources`, {
        body: "--xyz\r\nbroken",
        headers: { "content-type": "multipart/form-data" }
      })
      expectError(response, 400, "invalid_request")
    })
  })
})

describe("Idempotency-Key on uploads", () => {
  it("JSON: a replay returns the first 202 body byte for byte with Idempotent-Replayed: true, and creates one source", async () => {
    const kb = await newKnowledgebase()
    const body = { name: "Replayed", contentMarkdown: uniqueText("# replay me") }
    const headers = { "idempotency-key": `json-replay-${kb}` }
    const first = await uploadJson(server, kb, body, { headers })
    expect(first.status).toBe(202)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const second = await uploadJson(server, kb, body, { headers })
    expect(second.status).toBe(202)
    expect(second.text).toBe(first.text)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(second.headers.get("content-type")).toMatch(/^application\/json/)

    // Once indexed, the replay still answers what the first request answered.
    await waitForSource(server, kb, first.body.source.id)
    const third = await uploadJson(server, kb, body, { headers })
    expect(third.text).toBe(first.text)
    expect(third.headers.get("idempotent-replayed")).toBe("true")
    expect((await listSources(server, kb)).map((source) => source.id)).toEqual([first.body.source.id])
    expect((await knowledgebase(kb)).counts.sources).toBe(1)
  })

  it("JSON: the same key with a different body → 409 conflict, nothing written", async () => {
    const kb = await newKnowledgebase()
    const headers = { "idempotency-key": `json-conflict-${kb}` }
    const first = accepted(await uploadJson(server, kb, { name: "First", contentText: uniqueText("first") }, { headers }))
    await waitForSource(server, kb, first.id)
    await refusedWithoutWrites(kb, async () => {
      expectError(await uploadJson(server, kb, { name: "Second", contentText: uniqueText("second") }, { headers }), 409, "conflict")
      expectError(await uploadFixture(server, kb, "notes.txt", { headers }), 409, "conflict")
    })
  })

  it("multipart: a replay returns the first 202 body with Idempotent-Replayed: true and creates one source", async () => {
    const kb = await newKnowledgebase()
    const bytes = new TextEncoder().encode(uniqueText("multipart replay"))
    const headers = { "idempotency-key": `form-replay-${kb}` }
    const send = () => uploadForm(server, kb, [{ field: "file", file: { name: "replay.txt", bytes } }, { field: "name", value: "Replay" }], { headers })
    const first = await send()
    expect(first.status).toBe(202)
    const second = await send()
    expect(second.status).toBe(202)
    expect(second.text).toBe(first.text)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    await waitForSource(server, kb, first.body.source.id)
    expect((await listSources(server, kb)).map((source) => source.id)).toEqual([first.body.source.id])
  })

  it("multipart: the same key with another file, another name or another folder → 409 conflict, nothing written", async () => {
    const kb = await newKnowledgebase()
    const folder = await createPage(kb, { title: "Folder", templateKey: "folder" })
    const bytes = new TextEncoder().encode(uniqueText("multipart conflict"))
    const headers = { "idempotency-key": `form-conflict-${kb}` }
    const first = accepted(await uploadForm(server, kb, [{ field: "file", file: { name: "one.txt", bytes } }], { headers }))
    await waitForSource(server, kb, first.id)
    await refusedWithoutWrites(kb, async () => {
      const other = new TextEncoder().encode(uniqueText("another file"))
      expectError(await uploadForm(server, kb, [{ field: "file", file: { name: "one.txt", bytes: other } }], { headers }), 409, "conflict")
      expectError(
        await uploadForm(server, kb, [{ field: "file", file: { name: "one.txt", bytes } }, { field: "name", value: "Renamed" }], { headers }),
        409,
        "conflict"
      )
      expectError(
        await uploadForm(server, kb, [{ field: "file", file: { name: "one.txt", bytes } }, { field: "parentPageId", value: folder.id }], {
          headers
        }),
        409,
        "conflict"
      )
      expectError(await uploadJson(server, kb, { name: "one.txt", contentText: "x" }, { headers }), 409, "conflict")
    })
  })

  it("the key is scoped to the address: the same key on another Knowledgebase's upload is a new request", async () => {
    const a = await newKnowledgebase()
    const b = await newKnowledgebase()
    const headers = { "idempotency-key": `per-address-${a}` }
    const first = await uploadJson(server, a, { name: "In A", contentText: uniqueText("in a") }, { headers })
    const second = await uploadJson(server, b, { name: "In B", contentText: uniqueText("in b") }, { headers })
    expect([first.status, second.status]).toEqual([202, 202])
    expect(second.headers.get("idempotent-replayed")).toBeNull()
    expect(second.body.source.id).not.toBe(first.body.source.id)
    await waitForSource(server, a, first.body.source.id)
    await waitForSource(server, b, second.body.source.id)
  })

  it("a refused upload (unknown folder) is replayed as the same refusal", async () => {
    const kb = await newKnowledgebase()
    const headers = { "idempotency-key": `refused-${kb}` }
    const body = { name: "Misfiled", contentText: uniqueText("misfiled"), parentPageId: unknownId() }
    await refusedWithoutWrites(kb, async () => {
      const first = await uploadJson(server, kb, body, { headers })
      expectError(first, 404, "not_found")
      const second = await uploadJson(server, kb, body, { headers })
      expectError(second, 404, "not_found")
      expect(second.text).toBe(first.text)
      expect(second.headers.get("idempotent-replayed")).toBe("true")
    })
  })

  it("a burst of identical requests with one key creates one source; every answer is that 202 or a 409 conflict", async () => {
    const kb = await newKnowledgebase()
    const body = { name: "Burst", contentText: uniqueText("burst") }
    const headers = { "idempotency-key": `burst-${kb}` }
    const responses = await Promise.all(Array.from({ length: 12 }, () => uploadJson(server, kb, body, { headers })))
    const acceptedOnes = responses.filter((response) => response.status === 202)
    expect(acceptedOnes.length).toBeGreaterThanOrEqual(1)
    expect(new Set(acceptedOnes.map((response) => response.text)).size).toBe(1)
    for (const response of responses.filter((r) => r.status !== 202)) expectError(response, 409, "conflict")
    const sources = await listSources(server, kb)
    expect(sources.map((source) => source.id)).toEqual([acceptedOnes[0]!.body.source.id])
    await waitForSource(server, kb, sources[0].id)
  })

  it("concurrent uploads of the same new bytes without a key make one document", async () => {
    const kb = await newKnowledgebase()
    const content = uniqueText("the same bytes, all at once")
    const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => uploadJson(server, kb, { name: `Copy ${i}`, contentText: content })))
    expect(responses.map((response) => response.status)).toEqual(Array(6).fill(202))
    expect(new Set(responses.map((response) => response.body.source.id)).size).toBe(1)
    expect((await knowledgebase(kb)).counts.sources).toBe(1)
    await waitForSource(server, kb, responses[0]!.body.source.id)
  })

  it("a key over 64 characters → 400 invalid_request, nothing written", async () => {
    const kb = await newKnowledgebase()
    await refusedWithoutWrites(kb, async () => {
      expectError(
        await uploadJson(server, kb, { name: "x", contentText: uniqueText("x") }, { headers: { "idempotency-key": "k".repeat(65) } }),
        400,
        "invalid_request"
      )
    })
  })
})

describe("plan cap on sources per Knowledgebase", () => {
  it.each([
    ["pro", 1_000],
    ["agency", 5_000]
  ] as const)("%s: upload number %i is accepted, the next → 403 plan_limit (JSON and multipart), nothing written", async (plan, cap) => {
    const org = await newOrganization()
    await setPlan(server, org.slug, plan)
    const kb = await newKnowledgebase(org.slug)
    await insertSources(server, { kb, count: cap - 1, org: org.slug })
    const last = accepted(await uploadJson(server, kb, { name: "Last one", contentText: uniqueText("the last that fits") }, { key: org.key }))
    await waitForSource(server, kb, last.id, { key: org.key })
    expect((await knowledgebase(kb, org.key)).counts.sources).toBe(cap)

    await expectNothingWritten(
      server,
      kb,
      () =>
        expectNoSourceRows(server, async () => {
          const message = expectError(
            await uploadJson(server, kb, { name: "One too many", contentText: uniqueText("over the cap") }, { key: org.key }),
            403,
            "plan_limit"
          )
          expect(message).toContain(String(cap))
          expectError(await uploadFixture(server, kb, "guide.md", { key: org.key }), 403, "plan_limit")
        }),
      { key: org.key }
    )

    // Another Knowledgebase of the organization has its own cap.
    const other = await newKnowledgebase(org.slug)
    const elsewhere = accepted(await uploadJson(server, other, { name: "Elsewhere", contentText: uniqueText("elsewhere") }, { key: org.key }))
    await waitForSource(server, other, elsewhere.id, { key: org.key })
  }, 60_000)

  it("attaching a document the organization already holds counts against the cap too", async () => {
    const org = await newOrganization()
    const full = await newKnowledgebase(org.slug)
    const home = await newKnowledgebase(org.slug)
    const existing = accepted(await uploadFixture(server, home, "notes.txt", { key: org.key }))
    await waitForSource(server, home, existing.id, { key: org.key })
    await insertSources(server, { kb: full, count: 1_000, org: org.slug })
    await expectNothingWritten(
      server,
      full,
      () =>
        expectNoSourceRows(server, async () => {
          expectError(await uploadFixture(server, full, "notes.txt", { key: org.key }), 403, "plan_limit")
        }),
      { key: org.key }
    )
    // Uploading it again where it already is needs no room: the existing source is the answer.
    const again = await uploadFixture(server, home, "notes.txt", { key: org.key })
    expect(again.status).toBe(202)
    expect(again.body.source.id).toBe(existing.id)
  }, 60_000)

  it("concurrent uploads into the last free place: exactly one is accepted, the rest → 403 plan_limit", async () => {
    const org = await newOrganization()
    const kb = await newKnowledgebase(org.slug)
    await insertSources(server, { kb, count: 999, org: org.slug })
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) => uploadJson(server, kb, { name: `Racer ${i}`, contentText: uniqueText(`racer ${i}`) }, { key: org.key }))
    )
    const winners = responses.filter((response) => response.status === 202)
    expect(winners).toHaveLength(1)
    for (const response of responses.filter((r) => r.status !== 202)) expectError(response, 403, "plan_limit")
    expect((await knowledgebase(kb, org.key)).counts.sources).toBe(1_000)
    await waitForSource(server, kb, winners[0]!.body.source.id, { key: org.key })
  }, 60_000)

  it("trial: the External API is not on the plan, so uploads are refused (403 api_disabled) before any cap; nothing written", async () => {
    // Organization keys and the External API exist only on Pro and Agency (apiPlans), so the trial cap of 20
    // sources per Knowledgebase cannot be reached through the API: an organization that drops to trial
    // keeps its key, but every upload is refused.
    const org = await newOrganization()
    const kb = await newKnowledgebase(org.slug)
    await insertSources(server, { kb, count: 20, org: org.slug })
    await setPlan(server, org.slug, "trial")
    await expectNoSourceRows(server, async () => {
      expectError(await uploadJson(server, kb, { name: "21st", contentText: uniqueText("21st") }, { key: org.key }), 403, "api_disabled")
    })
    const personal = await organizationWithPersonalKey(server, `sources-trial-${++orgCounter}`, "trial")
    await expectNoSourceRows(server, async () => {
      expectError(await uploadJson(server, kb, { name: "x", contentText: uniqueText("x") }, { key: personal }), 403, "api_disabled")
    })
  })
})

describe("one document across the organization (same bytes)", () => {
  it("same bytes uploaded to another Knowledgebase attach the same document (same source id), counted and searchable there", async () => {
    const a = await newKnowledgebase()
    const b = await newKnowledgebase()
    const content = uniqueText("# Shared\n\nThe marmalade protocol applies everywhere.")
    const first = accepted(await uploadJson(server, a, { name: "Shared doc", contentMarkdown: content }))
    const ready = await waitForSource(server, a, first.id)

    const second = await uploadJson(server, b, { name: "Another name", contentMarkdown: content })
    expect(second.status).toBe(202)
    expect(second.body).toEqual({ status: "ready", source: ready, reviewPath: null, deduplicated: true })

    expect((await knowledgebase(b)).counts.sources).toBe(1)
    expect((await knowledgebase(a)).counts.sources).toBe(1)
    expect(await listSources(server, b)).toEqual([ready])
    expect(await readSource(server, b, first.id)).toEqual(ready)
    expect((await documentHits(server, b, "marmalade")).map((hit) => hit.citation)).toEqual([
      expect.objectContaining({ knowledgebaseId: b, sourceId: first.id, sourceName: "Shared doc" })
    ])
    expect(await changes(b)).toEqual([expect.objectContaining({ knowledgebaseId: b, type: "source", id: first.id, change: "created" })])
  })

  it("same file bytes (multipart) to another Knowledgebase attach the same document", async () => {
    const a = await newKnowledgebase()
    const b = await newKnowledgebase()
    const bytes = new TextEncoder().encode(uniqueText("multipart shared document"))
    const first = accepted(await uploadForm(server, a, [{ field: "file", file: { name: "shared.txt", bytes } }]))
    await waitForSource(server, a, first.id)
    const second = await uploadForm(server, b, [{ field: "file", file: { name: "copy.txt", bytes } }])
    expect(second.status).toBe(202)
    expect(second.body.source.id).toBe(first.id)
    expect(second.body.source.name).toBe("shared.txt")
  })

  it("same bytes again to the same Knowledgebase answer the existing source; nothing new is written", async () => {
    const kb = await newKnowledgebase()
    const content = uniqueText("uploaded twice to one place")
    const first = accepted(await uploadJson(server, kb, { name: "Twice", contentText: content }))
    const ready = await waitForSource(server, kb, first.id)
    await refusedWithoutWrites(kb, async () => {
      const again = await uploadJson(server, kb, { name: "Twice again", contentText: content })
      expect(again.status).toBe(202)
      expect(again.body).toEqual({ status: "ready", source: ready, reviewPath: null, deduplicated: true })
    })
  })

  it("the same text as contentMarkdown and as a .md file is the same document", async () => {
    const kb = await newKnowledgebase()
    const content = uniqueText("# Same text two ways")
    const first = accepted(await uploadJson(server, kb, { name: "Inline", contentMarkdown: content }))
    await waitForSource(server, kb, first.id)
    const second = await uploadForm(server, kb, [{ field: "file", file: { name: "same.md", bytes: new TextEncoder().encode(content) } }])
    expect(second.body.source.id).toBe(first.id)
  })

  it("another organization uploading the same bytes gets its own document", async () => {
    const mine = await newKnowledgebase()
    const org = await newOrganization()
    const theirs = await newKnowledgebase(org.slug)
    const content = uniqueText("same bytes, two organizations")
    const first = accepted(await uploadJson(server, mine, { name: "Mine", contentText: content }))
    const second = accepted(await uploadJson(server, theirs, { name: "Theirs", contentText: content }, { key: org.key }))
    expect(second.id).not.toBe(first.id)
    expect(second.name).toBe("Theirs")
    await waitForSource(server, mine, first.id)
    await waitForSource(server, theirs, second.id, { key: org.key })
    expectError(await getSource(server, theirs, first.id, { key: org.key }), 404, "not_found")
  })

  it("filing the shared document in the second Knowledgebase shows there only (one place across the organization)", async () => {
    const a = await newKnowledgebase()
    const b = await newKnowledgebase()
    const folderA = await createPage(a, { title: "A folder", templateKey: "folder" })
    const folderB = await createPage(b, { title: "B folder", templateKey: "folder" })
    const content = uniqueText("filed in one place")
    const first = accepted(await uploadJson(server, a, { name: "Wanderer", contentText: content, parentPageId: folderA.id }))
    await waitForSource(server, a, first.id)
    const second = accepted(await uploadJson(server, b, { name: "Wanderer", contentText: content, parentPageId: folderB.id }), "ready")
    expect(second).toMatchObject({ id: first.id, parentPageId: folderB.id })
    expect((await readSource(server, b, first.id)).parentPageId).toBe(folderB.id)
    expect((await readSource(server, a, first.id)).parentPageId).toBeNull()
  })
})

describe("GET /knowledgebases/{id}/sources/{sourceId}", () => {
  it("404 not_found for a source of another Knowledgebase of the same organization, an unknown id, or not a uuid", async () => {
    const a = await newKnowledgebase()
    const b = await newKnowledgebase()
    const source = accepted(await uploadJson(server, a, { name: "Only in A", contentText: uniqueText("only in a") }))
    await waitForSource(server, a, source.id)
    expect(expectError(await getSource(server, b, source.id), 404, "not_found")).toContain(source.id)
    expectError(await getSource(server, a, unknownId()), 404, "not_found")
    expectError(await getSource(server, a, "not-a-uuid"), 404, "not_found")
  })

  it("404 not_found through another organization's key, even with the right Knowledgebase", async () => {
    const kb = await newKnowledgebase()
    const source = accepted(await uploadJson(server, kb, { name: "Private", contentText: uniqueText("private") }))
    await waitForSource(server, kb, source.id)
    const org = await newOrganization()
    expectError(await getSource(server, kb, source.id, { key: org.key }), 404, "not_found")
    expectError(await server.request("GET", `/knowledgebases/${kb}/sources`, { key: org.key }), 404, "not_found")
  })

  it("needs knowledge:read: a write-only key → 403 insufficient_scope", async () => {
    const kb = await newKnowledgebase()
    const source = accepted(await uploadJson(server, kb, { name: "Scoped", contentText: uniqueText("scoped") }))
    await waitForSource(server, kb, source.id)
    const writeOnly = await server.createKey({ name: "writer", scopes: ["knowledge:write"] })
    expectError(await getSource(server, kb, source.id, { key: writeOnly }), 403, "insufficient_scope")
  })
})

describe("GET /knowledgebases/{id}/sources", () => {
  it("answers {knowledgebaseId, sources, nextCursor}, oldest first, with `fields` and paging", async () => {
    const kb = await newKnowledgebase()
    const ids: Array<string> = []
    for (const name of ["One", "Two", "Three"]) {
      ids.push(accepted(await uploadJson(server, kb, { name, contentText: uniqueText(name) })).id)
      server.clock.advance(1)
    }
    for (const id of ids) await waitForSource(server, kb, id)
    const all = await server.request("GET", `/knowledgebases/${kb}/sources`)
    expect(all.status).toBe(200)
    expect(all.body).toEqual({ knowledgebaseId: kb, sources: expect.any(Array), nextCursor: null })
    expect(all.body.sources.map((source: any) => source.id)).toEqual(ids)

    const narrow = await server.request("GET", `/knowledgebases/${kb}/sources?fields=id,name,status`)
    expect(narrow.body.sources).toEqual([
      { id: ids[0], name: "One", status: "ready" },
      { id: ids[1], name: "Two", status: "ready" },
      { id: ids[2], name: "Three", status: "ready" }
    ])
    expectError(await server.request("GET", `/knowledgebases/${kb}/sources?fields=id,body`), 400, "invalid_request")

    const first = await server.request("GET", `/knowledgebases/${kb}/sources?limit=2`)
    expect(first.body.sources.map((source: any) => source.id)).toEqual(ids.slice(0, 2))
    expect(first.body.nextCursor).toEqual(expect.any(String))
    const rest = await server.request("GET", `/knowledgebases/${kb}/sources?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`)
    expect(rest.body.sources.map((source: any) => source.id)).toEqual(ids.slice(2))
    expect(rest.body.nextCursor).toBeNull()
  })
})

describe("bookkeeping", () => {
  it("an accepted upload writes one source, its original, one attachment, one job (until indexed) and two feed entries (created, ready)", async () => {
    const kb = await newKnowledgebase()
    const before = await sourceTableCounts(server)
    const source = accepted(await uploadJson(server, kb, { name: "Counted", contentText: uniqueText("counted") }))
    await waitForSource(server, kb, source.id)
    const after = await sourceTableCounts(server)
    expect({
      sources: after.sources - before.sources,
      attachments: after.attachments - before.attachments,
      originals: after.originals - before.originals,
      jobs: after.jobs - before.jobs,
      changes: after.changes - before.changes,
      sourcesCount: after.sourcesCount - before.sourcesCount
    }).toEqual({ sources: 1, attachments: 1, originals: 1, jobs: 0, changes: 2, sourcesCount: 1 })
    expect(after.passages).toBeGreaterThan(before.passages)
  })
})
