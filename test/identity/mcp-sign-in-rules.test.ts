/**
 * The pure rules of MCP sign-in's clients (issue 23), in process: which redirect URIs register, which
 * match a registered one (a loopback one whatever its port), which URL client ids can name a
 * metadata document, and how long a fetched document is kept for its `Cache-Control`.
 */
import { describe, expect, it } from "vitest"
import { cacheMsOf, clientIdUrlProblem, defaultClientMetadataSettings, isClientIdUrl, isJsonContentType } from "../../server/identity/mcp-sign-in/client-metadata.js"
import { redirectTarget, redirectUriMatches, redirectUriProblem } from "../../server/identity/mcp-sign-in/domain.js"

describe("redirect URIs", () => {
  it("register https, loopback http and private-use schemes; refuse credentials, fragments, web schemes and plain http elsewhere", () => {
    for (const uri of ["https://client.example/cb", "http://127.0.0.1:3000/cb", "http://[::1]/cb", "http://localhost/cb", "cursor://anysphere/cb", "com.example.app:/cb", "vscode://x.y/cb"]) {
      expect(redirectUriProblem(uri), uri).toBeNull()
    }
    for (const uri of ["https://u:p@client.example/cb", "http://u@localhost/cb", "https://client.example/cb#x", "http://client.example/cb", "file:///cb", "data:text/html,x", "wss://x/cb", "nope"]) {
      expect(redirectUriProblem(uri), uri).not.toBeNull()
    }
  })

  it("match exactly, except a loopback http URI whose port alone differs", () => {
    const cases: Array<[string, string, boolean]> = [
      ["http://127.0.0.1:33333/cb", "http://127.0.0.1:40000/cb", true],
      ["http://127.0.0.1/cb", "http://127.0.0.1:40000/cb", true],
      ["http://[::1]:1/cb", "http://[::1]:2/cb", true],
      ["http://localhost:1/cb?a=1", "http://localhost:2/cb?a=1", true],
      ["http://localhost:1/cb", "http://127.0.0.1:1/cb", false],
      ["http://127.0.0.1:1/cb", "http://127.0.0.1:2/other", false],
      ["http://127.0.0.1:1/cb", "http://127.0.0.1:2/cb?x", false],
      ["http://127.0.0.1:1/cb", "http://127.0.0.1:2/cb#f", false],
      ["https://client.example/cb", "https://client.example:444/cb", false],
      ["cursor://anysphere/cb", "cursor://anysphere/cb", true],
      ["cursor://anysphere:1/cb", "cursor://anysphere:2/cb", false]
    ]
    for (const [registered, requested, matches] of cases) expect(redirectUriMatches(registered, requested), `${registered} ~ ${requested}`).toBe(matches)
  })

  it("name where the approval goes: the origin, or a private-use scheme's scheme and host", () => {
    expect(redirectTarget("http://127.0.0.1:9/cb?x=1")).toBe("http://127.0.0.1:9")
    expect(redirectTarget("cursor://anysphere.cursor-retrieval/oauth/cb")).toBe("cursor://anysphere.cursor-retrieval")
    expect(redirectTarget("com.example.app:/cb")).toBe("com.example.app:")
  })
})

describe("client id URLs", () => {
  it("a UUID is no URL; an https URL in normal form with a path names a document", () => {
    expect(isClientIdUrl("0b7f3c1e-8f44-4f55-9a8e-3f0d2f0a1b2c")).toBe(false)
    expect(isClientIdUrl("https://client.example/client.json")).toBe(true)
    expect(clientIdUrlProblem("https://client.example/client.json")).toBeNull()
    expect(clientIdUrlProblem("https://client.example:8443/oauth/client.json?v=2")).toBeNull()
    const refused: Array<[string, string]> = [
      ["http://client.example/client.json", "not an https URL"],
      ["https://client.example", "no path"],
      ["https://client.example/", "no path"],
      ["https://client.example/c.json#x", "fragment"],
      ["https://u:p@client.example/c.json", "user name or password"],
      ["https://client.example/a/./c.json", ". or .. segments"],
      ["https://client.example/a/%2E%2E/c.json", ". or .. segments"],
      ["https://Client.Example/c.json", "normal form"],
      ["https://client.example:443/c.json", "normal form"],
      [`https://client.example/${"a".repeat(2050)}`, "longer than 2048"]
    ]
    for (const [clientId, says] of refused) expect(clientIdUrlProblem(clientId), clientId).toContain(says)
  })

  it("documents are JSON by their content type", () => {
    for (const type of ["application/json", "application/json; charset=utf-8", "Application/JSON", "application/oauth-client+json"]) expect(isJsonContentType(type), type).toBe(true)
    for (const type of [null, "text/html", "application/jsonx", "text/json"]) expect(isJsonContentType(type), String(type)).toBe(false)
  })
})

describe("how long a document is kept", () => {
  const keep = (cacheControl: string | null) => cacheMsOf(cacheControl, defaultClientMetadataSettings)
  it("max-age within 1 minute and 24 hours, no-store and no-cache at the floor, 5 minutes without one", () => {
    expect(keep("max-age=120")).toBe(120_000)
    expect(keep("public, MAX-AGE=600")).toBe(600_000)
    expect(keep("max-age=5")).toBe(60_000)
    expect(keep("max-age=999999")).toBe(24 * 60 * 60_000)
    expect(keep("no-store")).toBe(60_000)
    expect(keep("max-age=600, no-cache")).toBe(60_000)
    expect(keep(null)).toBe(300_000)
    expect(keep("private")).toBe(300_000)
    expect(keep("max-age=soon")).toBe(300_000)
  })
})
