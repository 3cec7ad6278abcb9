/**
 * The `end_user.signup` event of a first sign-in at a Portal over HTTP: recorded once, for the
 * Portal where the person first signed in; nothing for a later sign-in there or at a second
 * Portal; once when two first sign-ins at two Portals race; nothing when the code was wrong.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sql } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { createPortal, enableWebhook, endUser, latestCode, PortalClient } from "./support.js"

let server: TestServer
let first: string
let second: string

const signups = (endUserId: string) =>
  sql(server, (db) => db<{ portal_id: string; body: string }>`SELECT portal_id, body FROM webhook_deliveries WHERE end_user_id = ${endUserId} AND test = 0`)

beforeAll(async () => {
  server = await startTestServer()
  first = await createPortal(server, "First")
  second = await createPortal(server, "Second")
  await enableWebhook(server, first)
  await enableWebhook(server, second)
})
afterAll(async () => {
  await server.stop()
})

describe("end_user.signup at a Portal", () => {
  it("is recorded at the first sign-in, for that Portal, with the person and the Portal", async () => {
    const id = await endUser(server, "amy@example.com", "pending")
    const client = new PortalClient(server, first)
    await client.requestCode("amy@example.com")
    const code = (await latestCode(server, "amy@example.com"))!
    await client.post("verify", { email: "amy@example.com", code: code === "000000" ? "111111" : "000000" })
    expect(await signups(id)).toEqual([])
    expect((await client.post("verify", { email: "amy@example.com", code })).status).toBe(303)
    const recorded = await signups(id)
    expect(recorded.map((row) => row.portal_id)).toEqual([first])
    expect(JSON.parse(recorded[0]!.body)).toMatchObject({
      event: "end_user.signup",
      toolsetId: first,
      toolsetName: "First",
      endUser: { id, email: "amy@example.com", fullName: null }
    })
  })

  it("is not recorded again at a later sign-in, here or at another Portal", async () => {
    const id = await endUser(server, "bo@example.com")
    expect((await new PortalClient(server, first).signIn("bo@example.com")).status).toBe(303)
    expect((await new PortalClient(server, first).signIn("bo@example.com")).status).toBe(303)
    expect((await new PortalClient(server, second).signIn("bo@example.com")).status).toBe(303)
    expect((await signups(id)).map((row) => row.portal_id)).toEqual([first])
  })

  it("is not recorded at a Portal with a webhook when the first sign-in was at one without", async () => {
    const quiet = await createPortal(server, "Quiet")
    const id = await endUser(server, "cal@example.com")
    expect((await new PortalClient(server, quiet).signIn("cal@example.com")).status).toBe(303)
    expect((await new PortalClient(server, first).signIn("cal@example.com")).status).toBe(303)
    expect(await signups(id)).toEqual([])
  })

  it("is recorded once when first sign-ins at two Portals race", async () => {
    for (let round = 0; round < 3; round++) {
      const email = `race${round}@example.com`
      const id = await endUser(server, email)
      const a = new PortalClient(server, first)
      const b = new PortalClient(server, second)
      await a.requestCode(email)
      const codeA = (await latestCode(server, email))!
      await b.requestCode(email)
      const codeB = (await latestCode(server, email))!
      const [signedA, signedB] = await Promise.all([a.post("verify", { email, code: codeA }), b.post("verify", { email, code: codeB })])
      expect([signedA.status, signedB.status]).toEqual([303, 303])
      expect(await signups(id)).toHaveLength(1)
      const firstAt = await sql(server, (db) => db<{ first_signed_in_at: string | null }>`SELECT first_signed_in_at FROM end_users WHERE id = ${id}`)
      expect(firstAt[0]!.first_signed_in_at).not.toBeNull()
    }
  })
})
