/**
 * MCP sign-in connections driven by the MCP SDK's client auth provider over real sockets: discovery,
 * registration, the sign-in pages (email, one-time code from the outbox, workspace choice), the
 * token exchange, then tools acting as the member; the address binding, REST refusing the tokens,
 * and who may sign in at all.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccountsService } from "../../server/platform/accounts/service.js"
import { removeDataDirs } from "../cli/helpers.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call } from "./helpers.js"
import { Browser, connectSignedIn, initializeWith, mailCount, workspaceOptions } from "./sign-in-helpers.js"

let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
  for (const slug of ["acme", "zeta", "other"]) {
    await server.createOrganization(slug)
    await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization(slug, { enable: ["mcp"] })))
  }
  await server.addMember("ada@example.com", "member", "acme")
  await server.addMember("ada@example.com", "viewer", "zeta")
  await server.addMember("bob@example.com", "admin", "other")
})
afterAll(async () => {
  await server.stop()
  removeDataDirs()
})

describe("MCP sign-in at {mcp_url}", () => {
  it("signs in with email and a one-time code, lists only the member's workspaces, and the client acts as the chosen membership", async () => {
    let offered: ReadonlyArray<string> = []
    const { client, provider } = await connectSignedIn(server, "/mcp", { email: "ada@example.com", workspace: "zeta", onChoice: (slugs) => void (offered = slugs) })
    expect(offered).toEqual(["acme", "zeta"])
    const who = (await call(client, "whoami")).body
    expect(who.organization.slug).toBe("zeta")
    expect(who.member).toMatchObject({ email: "ada@example.com", role: "viewer" })
    expect(who.connection).toMatchObject({ kind: "sign_in", client: "Test MCP client", address: "/mcp" })
    expect(who.key.kind).toBe("personal")
    const kbs = await call(client, "list_knowledgebases")
    expect(kbs.isError).toBe(false)
    expect(provider.saved?.token_type).toBe("Bearer")
    expect(provider.saved?.expires_in).toBe(3600)
    await client.close()
  })
})
