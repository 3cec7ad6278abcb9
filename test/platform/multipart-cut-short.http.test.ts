/**
 * A `multipart/form-data` upload whose body is complete by its `Content-Length` but not as a
 * multipart document (no closing boundary, part headers with no blank line, no boundary at all)
 * is answered promptly with 400 `invalid_request`, and nothing is written. Sent over a raw socket
 * so that a request left unanswered shows as a timeout instead of a hung test.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { requestIdPattern } from "../support/fixtures.js"
import { sendRaw } from "../support/raw-http.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { expectNoSourceRows } from "../support/source-rows.js"
import { expectNothingWritten } from "../support/sources.js"

let server: TestServer
let kb: string
beforeAll(async () => {
  server = await startTestServer({ server: { ingestionWorker: false } })
  kb = (await server.request("POST", "/knowledgebases", { body: { name: "Uploads cut short" } })).body.knowledgebase.id
})
afterAll(() => server.stop())

const filePart = '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello'

const bodies: ReadonlyArray<readonly [string, string]> = [
  ["a file part and no closing boundary", filePart],
  ["a file part, its delimiter, then nothing", `${filePart}\r\n--xyz`],
  ["a file part, its delimiter and a line break, then nothing", `${filePart}\r\n--xyz\r\n`],
  ["part headers with no blank line", '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain'],
  ["part headers with no blank line before the closing boundary", '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n--xyz--\r\n'],
  ["a field part and no closing boundary", '--xyz\r\nContent-Disposition: form-data; name="name"\r\n\r\nNotes'],
  ["only the opening delimiter", "--xyz"],
  ["a body that is not multipart", "this is not multipart at all"],
  ["an empty body", ""]
]

describe("a multipart upload cut short", () => {
  it.each(bodies)("%s → 400 invalid_request promptly, nothing written", async (_, body) => {
    await expectNothingWritten(server, kb, () =>
      expectNoSourceRows(server, async () => {
        const started = Date.now()
        const response = await sendRaw(
          server.origin,
          [
            `POST /api/v1/knowledgebases/${kb}/sources HTTP/1.1`,
            `host: ${new URL(server.origin).host}`,
            `authorization: Bearer ${server.key}`,
            "content-type: multipart/form-data; boundary=xyz"
          ].join("\r\n"),
          body,
          3_000
        )
        expect({ timedOut: response.timedOut, status: response.status }).toEqual({ timedOut: false, status: 400 })
        expect(Date.now() - started).toBeLessThan(3_000)
        expect(JSON.parse(response.body)).toEqual({ error: { code: "invalid_request", message: expect.any(String) } })
        expect(response.headers["x-request-id"]).toMatch(requestIdPattern)
      })
    )
  })
})
