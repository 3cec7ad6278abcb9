import { connect, type Socket } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import { backendDataDir, parseOneDocument, removeDataDirs, serveProcess, type Served, slow } from "./helpers.js"
import { sleep } from "../support/timing.js"

afterAll(removeDataDirs)


/** Starts a POST whose body is only half sent, so the request stays in flight. */
const halfSentRequest = async (served: Served) => {
  const ready = parseOneDocument(served.stdout())
  const url = new URL(`${ready.baseUrl}/knowledgebases`)
  const body = JSON.stringify({ name: "Graceful" })
  const socket: Socket = connect(Number(url.port), url.hostname)
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
  let response = ""
  socket.on("data", (chunk: Buffer) => (response += chunk.toString()))
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()))
  socket.write(
    `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${ready.bootstrapKey}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`
  )
  await sleep(300)
  return {
    finish: async () => {
      // The rest of the body without a FIN: Node's HTTP server aborts a request whose client half-closes.
      socket.write(body.slice(5))
      await closed
      return response
    },
    destroy: () => socket.destroy()
  }
}

const running = (served: Served) => served.child.exitCode === null && served.child.signalCode === null

describe("svc serve shutdown", slow, () => {
  it("lets an in-flight request finish after SIGTERM, then exits 0", async () => {
    const served = await serveProcess(await backendDataDir(), ["--json"])
    const request = await halfSentRequest(served)
    try {
      served.child.kill("SIGTERM")
      await sleep(500)
      expect(running(served)).toBe(true)
      const response = await request.finish()
      expect(response).toMatch(/^HTTP\/1\.1 201/)
      expect(await served.exited()).toBe(0)
    } finally {
      request.destroy()
      await served.stop("SIGKILL")
    }
  })

  it("exits at once with 130 on a second signal", async () => {
    const served = await serveProcess(await backendDataDir(), ["--json"])
    const request = await halfSentRequest(served)
    try {
      served.child.kill("SIGINT")
      await sleep(300)
      expect(running(served)).toBe(true)
      served.child.kill("SIGINT")
      expect(await served.stop()).toBe(130)
    } finally {
      request.destroy()
      await served.stop("SIGKILL")
    }
  })
})
