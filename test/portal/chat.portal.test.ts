/**
 * Signed in at a Portal over HTTP: exactly the published Apps the person's groups grant and the
 * Portal admits; a chat turn by plain form post and streamed (the API's SSE events), charged to the
 * person's subscription pools (bonus first, then the allowance, oldest subscription first) with no
 * organization credit taken and the usage shown by `GET /end-users/{id}`; `insufficient_credits`
 * shown plainly when the pools are empty, with nothing run; someone else's conversation refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sql } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { parseFrames } from "../runtime/support.js"
import { admit, createPortal, endUser, grant, organizationCredits, plan, pools, PortalClient, publishedApp, subscribe } from "./support.js"

let server: TestServer
let portal: string
let desk: string
let planGroup: string
let planId: string

const executions = async () => Number((await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM executions`))[0]!.n)
const conversationOf = (page: string) => /name="conversation_id" value="([^"]*)"/.exec(page)?.[1] ?? ""

beforeAll(async () => {
  server = await startTestServer({ server: { model: {}, runs: { keepAliveMs: 100 } } })
  portal = await createPortal(server, "Help centre")
  desk = await publishedApp(server, "Help desk", "Answers <your> questions")
  const hidden = await publishedApp(server, "Other desk")
  const elsewhere = await publishedApp(server, "Elsewhere desk")
  const made = await plan(server, "Basic", 10)
  planId = made.id
  planGroup = made.groupId
  await grant(server, planGroup, desk)
  await admit(server, portal, planGroup)
  const other = await plan(server, "Other", 10)
  await grant(server, other.groupId, elsewhere)
  void hidden
})
afterAll(async () => {
  await server.stop()
})

describe("the Apps of a signed-in person", () => {
  it("lists exactly the published Apps granted to their admitted groups, escaped", async () => {
    const id = await endUser(server, "lee@example.com")
    await subscribe(server, id, planId, { allowance: 5 })
    const client = new PortalClient(server, portal)
    await client.signIn("lee@example.com")
    const home = await client.get()
    expect(home.text).toContain("<h2>Your Apps</h2>")
    const links = [...home.text.matchAll(/<a href="\/portals\/[^/]+\/apps\/([^"]+)">([^<]+)<\/a>/g)].map((m) => [m[1], m[2]])
    expect(links).toEqual([[desk, "Help desk"]])
    expect(home.text).toContain("Answers &lt;your&gt; questions")
    expect((await client.get(`apps/${desk}`)).status).toBe(200)
  })

  it("refuses an App that is not granted here", async () => {
    const id = await endUser(server, "max@example.com")
    await subscribe(server, id, planId, { allowance: 5 })
    const client = new PortalClient(server, portal)
    await client.signIn("max@example.com")
    const other = await publishedApp(server, "Not granted")
    expect((await client.get(`apps/${other}`)).status).toBe(404)
    await client.get(`apps/${desk}`)
    const before = await executions()
    expect((await client.post(`apps/${other}`, { message: "hi", conversation_id: "" })).status).toBe(404)
    expect(await executions()).toBe(before)
  })
})

describe("a chat turn", () => {
  it("runs by plain form post, keeps the conversation, and spends bonus credits first, never the organization's", async () => {
    const id = await endUser(server, "ned@example.com")
    const subscription = await subscribe(server, id, planId, { allowance: 5, bonus: 1 })
    const orgCredits = await organizationCredits(server)
    const client = new PortalClient(server, portal)
    await client.signIn("ned@example.com")
    await client.get(`apps/${desk}`)
    const first = await client.post(`apps/${desk}`, { message: "Hello there", conversation_id: "" })
    expect(first.status).toBe(200)
    expect(first.text).toContain("Hello there")
    expect(first.text).toMatch(/class="message assistant"/)
    const conversation = conversationOf(first.text)
    expect(conversation).toMatch(/^[0-9a-f-]{36}$/)
    expect(await pools(server, subscription)).toEqual({ credits_used: 0, bonus_credits: 0 })
    const second = await client.post(`apps/${desk}`, { message: "And again", conversation_id: conversation })
    expect(second.status).toBe(200)
    expect(conversationOf(second.text)).toBe(conversation)
    expect(second.text).toContain("Hello there")
    expect(second.text).toContain("And again")
    expect(await pools(server, subscription)).toEqual({ credits_used: 1, bonus_credits: 0 })
    expect(await organizationCredits(server)).toBe(orgCredits)

    const shown = await server.request("GET", `/end-users/${id}`)
    expect(shown.status).toBe(200)
    expect(JSON.stringify(shown.body)).toContain('"creditsUsed":1')
    expect(JSON.stringify(shown.body)).toContain('"bonusCredits":0')

    const stranger = await endUser(server, "oli@example.com")
    await subscribe(server, stranger, planId, { allowance: 5 })
    const other = new PortalClient(server, portal)
    await other.signIn("oli@example.com")
    await other.get(`apps/${desk}`)
    const before = await executions()
    expect((await other.post(`apps/${desk}`, { message: "Let me in", conversation_id: conversation })).status).toBe(404)
    expect((await other.get(`apps/${desk}?conversation=${conversation}`)).status).toBe(404)
    expect(await executions()).toBe(before)
  })

  it("takes the oldest subscription's allowance first when there is no bonus", async () => {
    const id = await endUser(server, "pia@example.com")
    const second = await plan(server, "Extra", 10)
    await admit(server, portal, second.groupId)
    const older = await subscribe(server, id, planId, { allowance: 1, createdAt: "2026-01-01T00:00:00.000Z" })
    const newer = await subscribe(server, id, second.id, { allowance: 3, createdAt: "2026-02-01T00:00:00.000Z" })
    const client = new PortalClient(server, portal)
    await client.signIn("pia@example.com")
    await client.get(`apps/${desk}`)
    await client.post(`apps/${desk}`, { message: "one", conversation_id: "" })
    expect(await pools(server, older)).toEqual({ credits_used: 1, bonus_credits: 0 })
    expect(await pools(server, newer)).toEqual({ credits_used: 0, bonus_credits: 0 })
    await client.post(`apps/${desk}`, { message: "two", conversation_id: "" })
    expect(await pools(server, older)).toEqual({ credits_used: 1, bonus_credits: 0 })
    expect(await pools(server, newer)).toEqual({ credits_used: 1, bonus_credits: 0 })
  })

  it("says plainly that no credits are left, and runs nothing", async () => {
    const id = await endUser(server, "quin@example.com")
    const subscription = await subscribe(server, id, planId, { allowance: 2, used: 2 })
    const client = new PortalClient(server, portal)
    await client.signIn("quin@example.com")
    await client.get(`apps/${desk}`)
    const before = await executions()
    const refused = await client.post(`apps/${desk}`, { message: "Anything?", conversation_id: "" })
    expect(refused.status).toBe(402)
    expect(refused.text).toContain("No credits are left on your plans (insufficient_credits).")
    expect(refused.text).toContain('aria-describedby="message-error"')
    const streamed = await client.send("POST", `apps/${desk}`, { message: "Anything?", conversation_id: "", csrf_token: client.csrf }, { accept: "text/event-stream" })
    expect(streamed.status).toBe(402)
    expect(await executions()).toBe(before)
    expect(await pools(server, subscription)).toEqual({ credits_used: 2, bonus_credits: 0 })
  })

  it("streams the reply as the API's SSE events when asked for text/event-stream", async () => {
    const id = await endUser(server, "ros@example.com")
    const subscription = await subscribe(server, id, planId, { allowance: 5 })
    const client = new PortalClient(server, portal)
    await client.signIn("ros@example.com")
    await client.get(`apps/${desk}`)
    const streamed = await client.send("POST", `apps/${desk}`, { message: "Stream it", conversation_id: "", csrf_token: client.csrf }, { accept: "text/event-stream" })
    expect(streamed.status).toBe(200)
    expect(streamed.headers.get("content-type")).toMatch(/^text\/event-stream/)
    const { events } = parseFrames(streamed.text)
    const names = events.filter((e) => e.event !== "comment").map((e) => e.event)
    expect(names[0]).toBe("start")
    expect(names).toContain("delta")
    expect(names.at(-1)).toBe("done")
    const done = events.find((e) => e.event === "done")!.data
    expect(done.conversation_id).toBe(events[0]!.data.conversation_id)
    expect(await pools(server, subscription)).toEqual({ credits_used: 1, bonus_credits: 0 })
    const page = await client.get(`apps/${desk}?conversation=${done.conversation_id}`)
    expect(page.status).toBe(200)
    expect(page.text).toContain("Stream it")
    expect(page.text).toContain(`value="${done.conversation_id}"`)
  })

  it("refuses the chat form without the CSRF token", async () => {
    const id = await endUser(server, "sam@example.com")
    await subscribe(server, id, planId, { allowance: 5 })
    const client = new PortalClient(server, portal)
    await client.signIn("sam@example.com")
    const before = await executions()
    expect((await client.send("POST", `apps/${desk}`, { message: "hi", conversation_id: "" })).status).toBe(403)
    expect(await executions()).toBe(before)
  })
})
