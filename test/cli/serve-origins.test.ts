/**
 * `svc serve --allowed-origins` and `SVC_ALLOWED_ORIGINS` (issue 23): an entry that is not an origin
 * is a usage error (exit 2) naming it, before anything starts or is created; listed origins are
 * served on the MCP address with CORS headers, other origins refused; the banner names them.
 */
import { readdirSync } from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import { sendWithHeaders } from "../support/header-request.js"
import { backendDataDir, expectFailure, freshDataDir, parseOneDocument, removeDataDirs, serve, slow, start, svc } from "./helpers.js"

afterAll(removeDataDirs)

const shape = "write each as scheme://host[:port] with http or https and nothing after the host, comma-separated."

/** A preflight of the MCP address from `origin`: 204 with that origin allowed, or 403. */
const preflight = (origin: string, baseUrl: string) =>
  sendWithHeaders(new URL(baseUrl).origin, "OPTIONS", "/mcp", { origin, "access-control-request-method": "POST" })

describe("svc serve --allowed-origins", slow, () => {
  it("refuses an entry that is not an origin as a usage error naming it, and creates nothing", async () => {
    for (const entry of ["ftp://files.example", "https://app.example/path", "*", "app.example", "https://*.example"]) {
      const dataDir = freshDataDir()
      const run = await svc(["serve", "--allowed-origins", `https://ok.example,${entry}`], dataDir)
      expect(expectFailure(run, 2)).toBe(`svc: --allowed-origins: '${entry}' is not an origin: ${shape}`)
      expect(readdirSync(dataDir)).toEqual([])
    }
  })

  it("refuses a bad SVC_ALLOWED_ORIGINS the same way, naming the variable", async () => {
    const dataDir = freshDataDir()
    const run = await svc(["serve"], dataDir, { SVC_ALLOWED_ORIGINS: "https://ok.example, https://user@bad.example" })
    expect(expectFailure(run, 2)).toBe(`svc: SVC_ALLOWED_ORIGINS: 'https://user@bad.example' is not an origin: ${shape}`)
    expect(readdirSync(dataDir)).toEqual([])
  })

  it("serves the listed origins with CORS headers and refuses others; the banner names them", async () => {
    const served = await serve(await backendDataDir(), ["--allowed-origins", "https://app.example/, http://tools.example:3000"], "Ctrl+C")
    try {
      const out = served.stdout()
      expect(out).toMatch(/Allowed origins: +https:\/\/app\.example, http:\/\/tools\.example:3000\n/)
      const baseUrl = /Base URL: +(\S+)/.exec(out)![1]!
      for (const origin of ["https://app.example", "http://tools.example:3000"]) {
        const answer = await preflight(origin, baseUrl)
        expect(answer.status).toBe(204)
        expect(answer.headers["access-control-allow-origin"]).toBe(origin)
      }
      expect((await preflight("https://other.example", baseUrl)).status).toBe(403)
    } finally {
      expect(await served.stop()).toBe(0)
    }
  })

  it("takes SVC_ALLOWED_ORIGINS when the flag is not given, and the flag over it", async () => {
    const env = { SVC_ALLOWED_ORIGINS: "https://env.example" }
    for (const [args, allowed, refused] of [
      [[], "https://env.example", "https://flag.example"],
      [["--allowed-origins", "https://flag.example"], "https://flag.example", "https://env.example"]
    ] as const) {
      const run = start(["serve", "--port", "0", "--json", ...args], await backendDataDir(), env)
      await run.waitFor((stdout) => stdout.includes("\n"))
      try {
        const { baseUrl } = parseOneDocument(run.stdout())
        expect((await preflight(allowed, baseUrl)).status).toBe(204)
        expect((await preflight(refused, baseUrl)).status).toBe(403)
      } finally {
        expect((await run.stop()).code).toBe(0)
      }
    }
  })
})
