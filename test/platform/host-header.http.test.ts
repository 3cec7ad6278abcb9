/**
 * A malformed Host header (sent over a raw socket, as no HTTP client would) never fails the
 * server: the API answers as usual, the MCP address its 401 with metadata on the loopback origin,
 * and a Portal address its own page.
 */
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

/** Sends one GET with `host` as Host and answers the status line, headers and body. */
const rawGet = (path: string, host: string, key?: string): Promise<{ status: number; head: string; body: string }> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(server.origin)
    const socket = connect(Number(port), hostname, () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${key === undefined ? "" : `Authorization: Bearer ${key}\r\n`}Connection: close\r\n\r\n`)
    )
    let data = ""
    socket.on("data", (chunk: Buffer) => (data += chunk.toString()))
    socket.on("error", reject)
    socket.on("end", () => {
      const split = data.indexOf("\r\n\r\n")
      resolve({ status: Number(data.split(" ")[1]), head: data.slice(0, split), body: data.slice(split + 4) })
    })
  })

describe("a malformed Host header", () => {
  for (const host of ["a b", "[::1", "%zz"]) {
    it(`is no failure: ${JSON.stringify(host)}`, async () => {
      const api = await rawGet("/api/v1/knowledgebases", host, server.key)
      expect(api.status).toBe(200)
      const mcp = await rawGet("/mcp", host)
      expect(mcp.status).toBe(401)
      expect(mcp.head.toLowerCase()).toContain('www-authenticate: bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource')
      const portal = await rawGet("/portals/00000000-0000-4000-8000-000000000000/", host)
      expect(portal.status).toBe(404)
      expect(portal.body).toContain("<html")
    })
  }
})
