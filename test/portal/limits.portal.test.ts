/**
 * A Portal form over the server's request limit (issue 23): a 413 page the browser can show, not a
 * reset connection, and nothing done (no code mailed, no outbox row).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sql } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createPortal } from "./support.js"

let server: TestServer
let portal: string
beforeAll(async () => {
  server = await startTestServer({ server: { ingestionWorker: false } })
  portal = await createPortal(server, "Members")
})
afterAll(() => server?.stop())

const outboxRows = async () => Number((await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM outbox_emails`))[0]!.n)

describe("a Portal form over the request limit", () => {
  it("is answered 413 with a page, after its body was read, and does nothing", async () => {
    const before = await outboxRows()
    const body = `email=${"a".repeat(5_000_000)}%40example.com`
    const answer = await fetch(`${server.origin}/portals/${portal}/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body
    })
    expect(answer.status).toBe(413)
    expect(answer.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(answer.headers.get("x-request-id")).toMatch(/^req_/)
    const page = await answer.text()
    expect(page).toContain("<h1>Too large</h1>")
    expect(page).toContain("over the 4.5 MB this server takes in one request. Nothing was done.")
    expect(await outboxRows()).toBe(before)
  })

  it("a form within the limit still goes through", async () => {
    const answer = await fetch(`${server.origin}/portals/${portal}/`, { redirect: "manual" })
    expect(answer.status).toBe(200)
  })
})
