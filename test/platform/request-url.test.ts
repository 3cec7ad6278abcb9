/**
 * The request-target helpers of the branches in front of the API: a plain path is read without a
 * URL, and anything a URL would decode or normalise is left to `requestUrl`, so a branch never
 * passes over a request that is its own.
 */
import { expect, it } from "vitest"
import { plainRequestPath, requestUrl } from "../../server/http/request-url.js"

it("reads a plain origin-form path without its query", () => {
  expect(plainRequestPath("/mcp")).toBe("/mcp")
  expect(plainRequestPath("/agents/a1/conversation?stream=1&x=%20")).toBe("/agents/a1/conversation")
  expect(plainRequestPath("/a/..b")).toBe("/a/..b")
})

it("leaves to requestUrl whatever a URL would decode or normalise, and agrees with it on the rest", () => {
  for (const target of ["/a/../mcp", "/./mcp", "/%6Dcp", "//evil/mcp", "http://host/mcp", "/a\\b", "*", "/mcp#x", "/x/..", undefined]) {
    expect(plainRequestPath(target)).toBeNull()
  }
  for (const target of ["/mcp", "/portals/p1/sign-in?next=/x", "/.well-known/oauth-authorization-server", "/a/..b"]) {
    expect(plainRequestPath(target)).toBe(requestUrl({ headers: { host: "localhost:3000" }, url: target }).pathname)
  }
})
