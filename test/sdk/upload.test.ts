import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import {
  InvalidRequestError,
  PayloadTooLargeError,
  type SourcesCreateUpload,
  Svc,
  type UploadProgress
} from "../../sdk/index.js"
import { multipartForm } from "../../sdk/runtime/multipart.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { json, startFakeApi } from "./local-http.js"

let server: TestServer
let svc: Svc
let knowledgebaseId: string

beforeAll(async () => {
  server = await startTestServer()
  svc = new Svc({ baseUrl: server.baseUrl, apiKey: server.key })
  knowledgebaseId = (await svc.knowledgebases.create({ name: "Uploads" })).knowledgebase.id
})
afterAll(async () => {
  await svc?.close()
  await server?.stop()
})

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/${name}`, import.meta.url))

const waitUntilSettled = async (sourceId: string) => {
  for (let i = 0; i < 200; i++) {
    const { source } = await svc.sources.get(knowledgebaseId, sourceId)
    if (source.status !== "processing") return source
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`source ${sourceId} is still processing`)
}

/** About 2 MB of text, unlike any other upload of the suite. */
const bigText = (): Uint8Array => {
  const lines = Array.from({ length: 40_000 }, (_, i) => `Line ${i}: the quick brown fox jumps over the lazy dog ${i * 7}.`)
  return new TextEncoder().encode(lines.join("\n"))
}

describe("sources.upload over a real server", () => {
  it("streams a file with progress that grows to the body's total, and the source becomes ready", async () => {
    const file = bigText()
    const seen: UploadProgress[] = []
    const answer = await svc.sources.upload(
      knowledgebaseId,
      { file, fileName: "fox.txt", name: "Fox lines" },
      { onProgress: (progress) => seen.push(progress) }
    )
    expect(answer.status).toBe("processing")
    expect(answer.source).toMatchObject({ name: "Fox lines", type: "txt", sizeBytes: file.byteLength, createdVia: "api" })

    expect(seen.length).toBeGreaterThan(10)
    const total = seen[0]!.total
    expect(total).toBeGreaterThan(file.byteLength)
    expect(total).toBeLessThan(file.byteLength + 1000)
    expect(seen[0]!.sent).toBe(0)
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i]!.total).toBe(total)
      expect(seen[i]!.sent).toBeGreaterThanOrEqual(seen[i - 1]!.sent)
    }
    expect(seen.at(-1)!.sent).toBe(total)
    expect(new Set(seen.map((p) => p.attempt))).toEqual(new Set([1]))

    expect((await waitUntilSettled(answer.source.id)).status).toBe("ready")
  })

  it("takes a Blob or a File, which lends its name and type", async () => {
    const file = new File([fixture("guide.md")], "guide.md", { type: "text/markdown" })
    const answer = await svc.sources.upload(knowledgebaseId, { file })
    expect(answer.source).toMatchObject({ name: "guide.md", type: "md" })
    const blob = new Blob([fixture("customers.csv")], { type: "text/csv" })
    const fromBlob = await svc.sources.upload(knowledgebaseId, { file: blob, fileName: "customers.csv", parentPageId: undefined })
    expect(fromBlob.source).toMatchObject({ name: "customers.csv", type: "csv" })
    expect((await waitUntilSettled(fromBlob.source.id)).status).toBe("ready")
  })

  it("keeps create typed for JSON and accepts a FormData too", async () => {
    const inline = await svc.sources.create(knowledgebaseId, { name: "Inline note", contentText: "Written inline." })
    expect(inline.source).toMatchObject({ name: "Inline note", type: "txt" })
    const form = new FormData()
    form.append("file", new Blob([fixture("notes.txt")], { type: "text/plain" }), "notes.txt")
    form.append("name", "Notes by form")
    const viaForm = await svc.sources.create(knowledgebaseId, form)
    expect(viaForm.source).toMatchObject({ name: "Notes by form", type: "txt" })
    expectTypeOf<SourcesCreateUpload["file"]>().toEqualTypeOf<Blob | Uint8Array>()
    expectTypeOf<SourcesCreateUpload>().toHaveProperty("parentPageId")
  })

  it("raises the typed error of a refusal, with its request id", async () => {
    const error = await svc.sources.upload(knowledgebaseId, { file: fixture("page.html"), fileName: "page.html" }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidRequestError)
    expect(error).toMatchObject({ status: 400, code: "invalid_request" })
    expect((error as InvalidRequestError).requestId).toMatch(/^req_/)
  })
})

describe("sources.upload against a scripted API", () => {
  it("retries with the same Idempotency-Key and body, reporting the new attempt's progress from 0", async () => {
    const fake = await startFakeApi((request, index, res) =>
      index === 0
        ? json(res, 500, { error: { code: "server_error", message: "Try again." } })
        : json(res, 202, { status: "processing", source: { id: "s1" }, reviewPath: null })
    )
    const client = new Svc({ baseUrl: fake.baseUrl, apiKey: "k" })
    try {
      const seen: UploadProgress[] = []
      await client.sources.upload("kb1", { file: new TextEncoder().encode("hello"), fileName: "a.txt" }, { onProgress: (p) => seen.push(p) })
      expect(fake.received).toHaveLength(2)
      const [first, second] = fake.received
      expect(first!.headers["idempotency-key"]).toEqual(expect.any(String))
      expect(second!.headers["idempotency-key"]).toBe(first!.headers["idempotency-key"])
      expect(second!.body).toBe(first!.body)
      expect(first!.headers["content-length"]).toBe(String(Buffer.byteLength(first!.body)))
      expect(first!.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/)
      expect(first!.body).toContain('Content-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: application/octet-stream\r\n\r\nhello\r\n')
      expect(seen.filter((p) => p.attempt === 1).at(-1)?.sent).toBe(seen[0]!.total)
      expect(seen.filter((p) => p.attempt === 2).map((p) => p.sent)[0]).toBe(0)
      expect(seen.at(-1)).toEqual({ sent: seen[0]!.total, total: seen[0]!.total, attempt: 2 })
    } finally {
      await client.close()
      await fake.close()
    }
  })

  it("refuses a body over the 4.5 MB request limit before sending anything", async () => {
    const fake = await startFakeApi((_request, _index, res) => json(res, 202, {}))
    const client = new Svc({ baseUrl: fake.baseUrl, apiKey: "k" })
    try {
      const error = await client.sources.upload("kb1", { file: new Uint8Array(4_500_001), fileName: "big.txt" }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(PayloadTooLargeError)
      expect(error).toMatchObject({ status: 413, code: "payload_too_large", requestId: undefined })
      expect(fake.received).toHaveLength(0)
    } finally {
      await client.close()
      await fake.close()
    }
  })

  it("encodes text fields before the file, leaves undefined ones out and escapes quotes in names", async () => {
    const body = multipartForm({ file: new Uint8Array([1, 2]), fileName: 'a"b.pdf', name: "N", parentPageId: undefined }, "file")
    const chunks: Uint8Array[] = []
    for await (const chunk of body.stream()) chunks.push(chunk)
    const text = Buffer.concat(chunks).toString("latin1")
    expect(Buffer.concat(chunks).byteLength).toBe(body.length)
    expect(text).not.toContain("parentPageId")
    expect(text.indexOf('name="name"')).toBeLessThan(text.indexOf('name="file"'))
    expect(text).toContain('filename="a%22b.pdf"')
    expect(() => multipartForm({ file: "not bytes" }, "file")).toThrow(TypeError)
  })
})
