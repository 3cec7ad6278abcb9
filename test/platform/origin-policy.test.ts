/**
 * The origin policy (`server/http/origin-policy.ts`) as a table: which `Origin` and `Host` pairs
 * pass on a server listening on loopback and on one listening on every address, which listed
 * origins parse, and which listen addresses count as loopback.
 */
import { describe, expect, it } from "vitest"
import { isLoopbackBind, judgeOrigin, originPolicy, parseAllowedOrigin } from "../../server/http/origin-policy.js"

const loopback = originPolicy(undefined, ["https://app.example", "http://tools.example:3000/"])
const everywhere = originPolicy("0.0.0.0", [])

/** The verdict as `true` (allowed, with the CORS origin) or the start of the refusal's reason. */
const verdict = (policy: typeof loopback, origin: string | undefined, host: string | undefined) => {
  const judged = judgeOrigin(policy, origin, host)
  return judged.allowed ? { cors: judged.corsOrigin } : judged.reason.split(" ").slice(0, 4).join(" ")
}

const refusedOrigin = "Requests from the origin"
const refusedHost = "This server listens on"

describe("judgeOrigin on a server listening on loopback", () => {
  const cases: ReadonlyArray<[string | undefined, string | undefined, unknown]> = [
    [undefined, "127.0.0.1:8787", { cors: null }],
    [undefined, undefined, { cors: null }],
    ["http://127.0.0.1:8787", "127.0.0.1:8787", { cors: "http://127.0.0.1:8787" }],
    ["http://localhost:6274", "127.0.0.1:8787", { cors: "http://localhost:6274" }],
    ["https://localhost", "127.0.0.1:8787", { cors: "https://localhost" }],
    ["http://127.9.9.9:1", "127.0.0.1:8787", { cors: "http://127.9.9.9:1" }],
    ["http://[::1]:3000", "[::1]:8787", { cors: "http://[::1]:3000" }],
    ["https://app.example", "127.0.0.1:8787", { cors: "https://app.example" }],
    ["https://app.example", "app.example", { cors: "https://app.example" }],
    ["http://tools.example:3000", "localhost:8787", { cors: "http://tools.example:3000" }],
    ["http://evil.example", "127.0.0.1:8787", refusedOrigin],
    ["null", "127.0.0.1:8787", refusedOrigin],
    ["file://", "127.0.0.1:8787", refusedOrigin],
    ["https://app.example:8443", "127.0.0.1:8787", refusedOrigin],
    ["http://tools.example", "127.0.0.1:8787", refusedOrigin],
    ["http://localhost.evil.example", "127.0.0.1:8787", refusedOrigin],
    ["http://evil.example, http://localhost", "127.0.0.1:8787", refusedOrigin],
    ["http://LOCALHOST:3000/", "127.0.0.1:8787", refusedOrigin],
    ["http://evil.example.com", "evil.example.com", refusedHost],
    [undefined, "evil.example.com:8787", refusedHost],
    [undefined, "192.168.1.5:8787", refusedHost],
    // A Host that is no host at all is read as absent (no browser sends one).
    [undefined, "a b", { cors: null }],
    ["http://localhost:1", "%zz", { cors: "http://localhost:1" }]
  ]
  for (const [origin, host, expected] of cases) {
    it(`Origin ${String(origin)}, Host ${String(host)}`, () => expect(verdict(loopback, origin, host)).toEqual(expected))
  }
})

describe("judgeOrigin on a server listening on every address", () => {
  it("checks no Host and takes the origin the Host names as its own; others are refused", () => {
    expect(verdict(everywhere, undefined, "svc.lan:8787")).toEqual({ cors: null })
    expect(verdict(everywhere, "http://svc.lan:8787", "svc.lan:8787")).toEqual({ cors: "http://svc.lan:8787" })
    expect(verdict(everywhere, "https://svc.example", "svc.example")).toEqual({ cors: "https://svc.example" })
    expect(verdict(everywhere, "http://svc.lan:9999", "svc.lan:8787")).toBe(refusedOrigin)
    expect(verdict(everywhere, "http://evil.example", "svc.lan:8787")).toBe(refusedOrigin)
    expect(verdict(everywhere, "http://localhost:3000", "svc.lan:8787")).toEqual({ cors: "http://localhost:3000" })
  })
})

describe("parseAllowedOrigin", () => {
  const cases: ReadonlyArray<[string, string | null]> = [
    ["https://app.example", "https://app.example"],
    [" https://App.Example/ ", "https://app.example"],
    ["https://app.example:443", "https://app.example"],
    ["http://tools.example:3000", "http://tools.example:3000"],
    ["http://[::1]:9", "http://[::1]:9"],
    ["ftp://files.example", null],
    ["https://app.example/path", null],
    ["https://user@app.example", null],
    ["https://app.example?x=1", null],
    ["https://*.example", null],
    ["*", null],
    ["null", null],
    ["app.example", null],
    ["", null]
  ]
  for (const [text, expected] of cases) {
    it(JSON.stringify(text), () => expect(parseAllowedOrigin(text)).toBe(expected))
  }

  it("a policy with an entry that is not an origin cannot be made", () => {
    expect(() => originPolicy(undefined, ["https://ok.example", "https://bad.example/x"])).toThrow(
      "'https://bad.example/x' is not an origin: write scheme://host[:port], with http or https and nothing after the host."
    )
  })
})

describe("isLoopbackBind", () => {
  const cases: ReadonlyArray<[string | undefined, boolean]> = [
    [undefined, true],
    ["127.0.0.1", true],
    ["127.0.1.1", true],
    ["localhost", true],
    ["::1", true],
    ["[::1]", true],
    ["0.0.0.0", false],
    ["::", false],
    ["192.168.1.5", false],
    ["svc.lan", false]
  ]
  for (const [host, expected] of cases) {
    it(String(host), () => expect(isLoopbackBind(host)).toBe(expected))
  }
})
