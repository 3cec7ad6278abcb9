/**
 * `svc serve` stopped under load (issue 24): SIGTERM while hundreds of requests are in flight or
 * queued (for the database's pool on PostgreSQL, the writer on SQLite) answers every one of them,
 * and only then closes the database and exits 0; what the creates answered is what is stored.
 * Connections the kernel took but the process had not yet accepted count as queued too.
 */
import { Effect } from "effect"
import { SqlClient } from "@effect/sql"
import { connect } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import { runAdmin } from "../../server/admin.js"
import { knownTestDatabase } from "../support/server.js"
import { backendDataDir, parseOneDocument, removeDataDirs, serveProcess, slow } from "./helpers.js"

afterAll(removeDataDirs)

/** One request on a connection of its own, written whole at once; resolves with the status of its answer, or the error that ended it. */
const rawRequest = (url: URL, method: string, key: string, body?: unknown): { sent: Promise<void>; answered: Promise<string> } => {
  const socket = connect(Number(url.port), url.hostname)
  const text = body === undefined ? "" : JSON.stringify(body)
  const sent = new Promise<void>((resolve) => socket.once("connect", () => resolve()))
  socket.write(
    `${method} ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n` +
      (body === undefined ? "\r\n" : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`)
  )
  let received = ""
  socket.on("data", (chunk: Buffer) => (received += chunk.toString()))
  const answered = new Promise<string>((resolve) => {
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(`error ${error.code ?? error.message}`))
    socket.once("close", () => resolve(received.split("\r\n", 1)[0] || "closed with no answer"))
  })
  return { sent, answered }
}

describe("svc serve stopped under load", slow, () => {
  it("answers every request in flight or queued when SIGTERM comes, then exits 0", async () => {
    const dataDir = await backendDataDir()
    const served = await serveProcess(dataDir, ["--json", "--quiet", "--rate-limit", "100000"])
    try {
      const ready = parseOneDocument(served.stdout())
      const key = ready.bootstrapKey as string
      const list = new URL(`${ready.baseUrl}/knowledgebases`)
      const agents = new URL(`${ready.baseUrl}/agents`)
      const requests = Array.from({ length: 240 }, (_, n) =>
        n % 3 === 0 ? { create: true, ...rawRequest(agents, "POST", key, { name: `Drained ${n}` }) } : { create: false, ...rawRequest(list, "GET", key) }
      )
      await Promise.all(requests.map((request) => request.sent))
      // Once the first answer is back the server has taken every connection; most requests are still to answer.
      await Promise.race(requests.map((request) => request.answered))
      served.child.kill("SIGTERM")
      const statuses = await Promise.all(requests.map((request) => request.answered))
      const expected = requests.map((request) => (request.create ? "HTTP/1.1 201 Created" : "HTTP/1.1 200 OK"))
      expect(statuses).toEqual(expected)
      expect(await served.exited()).toBe(0)
      const stored = await runAdmin(
        { dataDir, database: knownTestDatabase(dataDir) },
        Effect.orDie(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM agents WHERE name LIKE 'Drained %'`))
      )
      expect(Number(stored[0]!.n)).toBe(requests.filter((request) => request.create).length)
    } finally {
      await served.stop("SIGKILL")
    }
  })
})
