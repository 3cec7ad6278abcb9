/**
 * The organization's conversations and executions as lists, and a conversation's export (issue 25),
 * over HTTP on a real server: conversations across targets and across the end users of a Portal with
 * who started each, the filters, cursor paging, `since`, the scope and admin rules, another
 * organization's ids 404, bad parameters 400 with nothing written, and an export's lines in order
 * (a long conversation read page by page).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, organizationId, personalKey, sql } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { admit, createPortal, endUser, grant, plan, PortalClient, publishedApp, subscribe } from "../portal/support.js"
import { createAgent } from "./support.js"

let server: TestServer
let agentA: string
let agentB: string
let app: string
let portal: string
let ann: string
let bob: string
let viewerKey: string
let viewerMember: string
let adminKey: string
let agentsOnlyKey: string
let agentsOnlyKeyId: string
let bootstrapKeyId: string
let otherKey: string
/** Conversation ids by name, in the order they were started. */
const conversations = {} as Record<"orgAlpha" | "viewerBeta" | "annApp" | "bobApp" | "agentsOnlyAlpha" | "elsewhere", string>

const minute = 60_000
const conversationOf = (page: string) => /name="conversation_id" value="([^"]*)"/.exec(page)?.[1] ?? ""
/** Rows of the tables a read must never write. */
const written = async () =>
  sql(server, (db) =>
    db<{ c: number; e: number; m: number; p: number }>`SELECT (SELECT count(*) FROM conversations) AS c, (SELECT count(*) FROM executions) AS e,
      (SELECT count(*) FROM messages) AS m, (SELECT count(*) FROM portal_conversations) AS p`
  ).then((rows) => Object.values(rows[0]!).map(Number))

/** One Agent turn over the API; answers the conversation id. */
const agentTurn = async (agent: string, message: string, options: { key?: string; conversation?: string } = {}) => {
  server.clock.advance(minute)
  const answer = await server.request("POST", `/agents/${agent}/conversation`, {
    ...(options.key === undefined ? {} : { key: options.key }),
    body: { message, ...(options.conversation === undefined ? {} : { conversation_id: options.conversation }) }
  })
  expect(answer.status).toBe(200)
  return answer.body.conversation_id as string
}

/** One Portal turn of a signed-in end user; answers the conversation id. */
const portalTurn = async (client: PortalClient, message: string, conversation = "") => {
  server.clock.advance(minute)
  await client.get(`apps/${app}`)
  const page = await client.post(`apps/${app}`, { message, conversation_id: conversation })
  expect(page.status).toBe(200)
  return conversationOf(page.text)
}

const list = async (query = "", key?: string) => {
  const answer = await server.request("GET", `/conversations${query}`, key === undefined ? {} : { key })
  expect({ status: answer.status, body: answer.body }).toMatchObject({ status: 200 })
  return answer.body as { conversations: Array<any>; nextCursor: string | null }
}
const ids = (page: { conversations: Array<{ id: string }> }) => page.conversations.map((c) => c.id)

beforeAll(async () => {
  server = await startTestServer({ server: { model: {}, runs: { keepAliveMs: 100 } } })
  agentA = await createAgent(server, { name: "Alpha" })
  agentB = await createAgent(server, { name: "Beta" })
  portal = await createPortal(server, "Help centre")
  app = await publishedApp(server, "Help desk")
  const made = await plan(server, "Basic", 50)
  await grant(server, made.groupId, app)
  await admit(server, portal, made.groupId)
  ann = await endUser(server, "ann@example.com")
  bob = await endUser(server, "bob@example.com")
  await subscribe(server, ann, made.id, { allowance: 20 })
  await subscribe(server, bob, made.id, { allowance: 20 })
  viewerKey = await personalKey(server, { email: "vera@example.com", role: "viewer" })
  adminKey = await personalKey(server, { email: "ada@example.com", role: "admin" })
  agentsOnlyKey = await server.createKey({ name: "agents only", scopes: ["agents:execute"] })
  otherKey = await server.createOrganization("elsewhere")
  const org = await organizationId(server)
  const keys = await sql(server, (db) => db<{ id: string; name: string; member_id: string | null }>`SELECT id, name, member_id FROM api_keys WHERE organization_id = ${org}`)
  viewerMember = keys.find((k) => k.name === "personal vera@example.com")!.member_id!
  agentsOnlyKeyId = keys.find((k) => k.name === "agents only")!.id
  const bootstrap = keys.filter((k) => k.member_id === null && k.name !== "agents only")
  expect(bootstrap).toHaveLength(1)
  bootstrapKeyId = bootstrap[0]!.id

  // In order of first activity: an organization key's two-turn conversation with Alpha, a viewer's
  // with Beta, Ann's and Bob's at the Portal, the agents-only key's with Alpha; then Ann's second turn.
  conversations.orgAlpha = await agentTurn(agentA, "hello alpha")
  await agentTurn(agentA, "and again", { conversation: conversations.orgAlpha })
  conversations.viewerBeta = await agentTurn(agentB, "hello beta", { key: viewerKey })
  const annAtPortal = new PortalClient(server, portal)
  await annAtPortal.signIn("ann@example.com")
  conversations.annApp = await portalTurn(annAtPortal, "hi from ann")
  const bobAtPortal = new PortalClient(server, portal)
  await bobAtPortal.signIn("bob@example.com")
  conversations.bobApp = await portalTurn(bobAtPortal, "hi from bob")
  conversations.agentsOnlyAlpha = await agentTurn(agentA, "hello from a narrow key", { key: agentsOnlyKey })
  await portalTurn(annAtPortal, "ann again", conversations.annApp)
  // Another organization's own conversation.
  const elsewhereAgent = await createAgent(server, { name: "Elsewhere" }, { key: otherKey })
  conversations.elsewhere = await agentTurn(elsewhereAgent, "hello elsewhere", { key: otherKey })
}, 120_000)
afterAll(async () => {
  await server.stop()
})

describe("GET /conversations", () => {
  it("lists the organization's conversations across targets and end users, newest activity first, with who started each", async () => {
    const page = await list()
    expect(ids(page)).toEqual([
      conversations.annApp,
      conversations.agentsOnlyAlpha,
      conversations.bobApp,
      conversations.viewerBeta,
      conversations.orgAlpha
    ])
    expect(page.nextCursor).toBeNull()
    const byId = new Map(page.conversations.map((c) => [c.id, c]))
    expect(byId.get(conversations.orgAlpha)).toEqual({
      id: conversations.orgAlpha,
      targetKind: "agent",
      targetId: agentA,
      startedBy: { type: "api_key", apiKeyId: bootstrapKeyId, memberId: null, endUserId: null, portalId: null },
      turnCount: 2,
      lastActivityAt: "2026-11-21T12:02:00.000Z",
      createdAt: "2026-11-21T12:01:00.000Z"
    })
    expect(byId.get(conversations.viewerBeta)).toMatchObject({
      targetKind: "agent",
      targetId: agentB,
      startedBy: { type: "member", memberId: viewerMember, endUserId: null, portalId: null },
      turnCount: 1
    })
    expect(byId.get(conversations.viewerBeta)!.startedBy.apiKeyId).toEqual(expect.any(String))
    expect(byId.get(conversations.annApp)).toMatchObject({
      targetKind: "app",
      targetId: app,
      startedBy: { type: "end_user", apiKeyId: null, memberId: null, endUserId: ann, portalId: portal },
      turnCount: 2,
      lastActivityAt: "2026-11-21T12:07:00.000Z",
      createdAt: "2026-11-21T12:04:00.000Z"
    })
    expect(byId.get(conversations.bobApp)!.startedBy).toEqual({ type: "end_user", apiKeyId: null, memberId: null, endUserId: bob, portalId: portal })
    expect(byId.get(conversations.agentsOnlyAlpha)!.startedBy).toEqual({ type: "api_key", apiKeyId: agentsOnlyKeyId, memberId: null, endUserId: null, portalId: null })
  })

  it("filters by target kind, target, end user and since", async () => {
    expect(ids(await list("?targetKind=app"))).toEqual([conversations.annApp, conversations.bobApp])
    expect(ids(await list(`?targetId=${agentA}`))).toEqual([conversations.agentsOnlyAlpha, conversations.orgAlpha])
    expect(ids(await list(`?targetKind=agent&targetId=${agentB}`))).toEqual([conversations.viewerBeta])
    expect(ids(await list(`?endUserId=${ann}`))).toEqual([conversations.annApp])
    expect(ids(await list(`?endUserId=${bob}&targetKind=app`))).toEqual([conversations.bobApp])
    expect(ids(await list(`?endUserId=${ann}&targetKind=agent`))).toEqual([])
    // Inclusive, and any offset is read as the instant it names.
    expect(ids(await list("?since=2026-11-21T12:05:00Z"))).toEqual([conversations.annApp, conversations.agentsOnlyAlpha, conversations.bobApp])
    expect(ids(await list(`?since=${encodeURIComponent("2026-11-21T13:06:00+01:00")}`))).toEqual([conversations.annApp, conversations.agentsOnlyAlpha])
    expect(ids(await list("?since=2026-11-22T00:00:00Z"))).toEqual([])
  })

  it("pages with the cursor, each conversation once, and refuses a cursor of another list", async () => {
    const all = ids(await list())
    const seen: Array<string> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: { conversations: Array<any>; nextCursor: string | null } = await list(`?limit=2${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`)
      expect(page.conversations.length).toBeLessThanOrEqual(2)
      seen.push(...ids(page))
      cursor = page.nextCursor
      pages++
    } while (cursor !== null)
    expect(pages).toBe(3)
    expect(seen).toEqual(all)
    const first = await list("?limit=2")
    const before = await written()
    expectError(await server.request("GET", `/conversations?limit=2&targetKind=app&cursor=${encodeURIComponent(first.nextCursor!)}`), 400, "invalid_request")
    expectError(await server.request("GET", `/executions?cursor=${encodeURIComponent(first.nextCursor!)}`), 400, "invalid_request")
    expect(await written()).toEqual(before)
  })

  it("lists only the kinds whose :execute scope the key holds, and refuses a kind it lacks with nothing written", async () => {
    expect(ids(await list("", agentsOnlyKey))).toEqual([conversations.agentsOnlyAlpha, conversations.viewerBeta, conversations.orgAlpha])
    const before = await written()
    expectError(await server.request("GET", "/conversations?targetKind=app", { key: agentsOnlyKey }), 403, "insufficient_scope")
    const readOnly = await server.createKey({ name: "reads only", scopes: ["agents:read", "knowledge:read"] })
    expectError(await server.request("GET", "/conversations", { key: readOnly }), 403, "insufficient_scope")
    expectError(await server.request("GET", "/conversations", { key: null }), 401, "unauthorized")
    expect(await written()).toEqual(before)
  })

  it("shows admins everyone's conversations and other members only those they started", async () => {
    expect(ids(await list("", adminKey))).toEqual(ids(await list()))
    expect(ids(await list("", viewerKey))).toEqual([conversations.viewerBeta])
    expect(ids(await list(`?endUserId=${ann}`, viewerKey))).toEqual([])
  })

  it("keeps organizations apart", async () => {
    expect(ids(await list("", otherKey))).toEqual([conversations.elsewhere])
    expect(ids(await list(`?endUserId=${ann}`, otherKey))).toEqual([])
    expect(ids(await list(`?targetId=${agentA}`, otherKey))).toEqual([])
  })

  it("refuses bad parameters with 400 invalid_request and writes nothing", async () => {
    const before = await written()
    for (const query of [
      "?targetKind=robot",
      "?targetId=not-a-uuid",
      "?endUserId=42",
      "?since=yesterday",
      "?limit=0",
      "?limit=201",
      "?cursor=nonsense",
      "?owner=me"
    ]) {
      const answer = await server.request("GET", `/conversations${query}`)
      expect({ query, status: answer.status, code: answer.body?.error?.code }).toEqual({ query, status: 400, code: "invalid_request" })
    }
    expect(await written()).toEqual(before)
  })
})

/** The lines of an export. */
const exportOf = async (id: string, key?: string) => {
  const answer = await server.request("GET", `/conversations/${id}/export`, key === undefined ? {} : { key })
  return { ...answer, lines: answer.status === 200 ? answer.text.trimEnd().split("\n").map((line) => JSON.parse(line)) : [] }
}

describe("GET /conversations/{id}/export", () => {
  it("streams JSON Lines: each execution on the line before its messages, in order, as the API shows them", async () => {
    const answer = await exportOf(conversations.annApp)
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toBe("application/x-ndjson")
    expect(answer.text.endsWith("\n")).toBe(true)
    expect(answer.lines.map((line) => (line.type === "message" ? `${line.role}:${line.text}` : "execution"))).toEqual([
      "execution",
      "user:hi from ann",
      expect.stringMatching(/^assistant:/),
      "execution",
      "user:ann again",
      expect.stringMatching(/^assistant:/)
    ])
    const messages = (await server.request("GET", `/conversations/${conversations.annApp}/messages`)).body.messages
    expect(answer.lines.filter((line) => line.type === "message")).toEqual(messages.map((m: object) => ({ type: "message", ...m })))
    for (const [at, line] of answer.lines.entries()) {
      if (line.type !== "execution") continue
      const { execution } = (await server.request("GET", `/executions/${line.id}`)).body
      expect(line).toEqual({ type: "execution", ...execution })
      expect(line).toMatchObject({ kind: "app", conversationId: conversations.annApp, status: "succeeded" })
      expect(answer.lines[at + 1].executionId).toBe(line.id)
      expect(answer.lines[at + 2].executionId).toBe(line.id)
    }
  })

  it("reads a long conversation page by page, every message once and in order", async () => {
    const id = await agentTurn(agentB, "turn 0")
    for (let turn = 1; turn < 105; turn++) await agentTurn(agentB, `turn ${turn}`, { conversation: id })
    const answer = await exportOf(id)
    expect(answer.status).toBe(200)
    expect(answer.lines).toHaveLength(105 * 3)
    const users = answer.lines.filter((line) => line.type === "message" && line.role === "user").map((line) => line.text)
    expect(users).toEqual(Array.from({ length: 105 }, (_, turn) => `turn ${turn}`))
    expect(new Set(answer.lines.filter((line) => line.type === "execution").map((line) => line.id)).size).toBe(105)
    expect((await list(`?targetId=${agentB}`)).conversations[0]).toMatchObject({ id, turnCount: 105 })
  }, 120_000)

  it("is 404 for another organization's conversation or an unknown id, and needs the kind's scope", async () => {
    const before = await written()
    expectError(await server.request("GET", `/conversations/${conversations.elsewhere}/export`), 404, "not_found")
    expectError(await server.request("GET", `/conversations/${conversations.orgAlpha}/export`, { key: otherKey }), 404, "not_found")
    expectError(await server.request("GET", "/conversations/00000000-0000-4000-8000-000000000000/export"), 404, "not_found")
    expectError(await server.request("GET", `/conversations/${conversations.annApp}/export`, { key: agentsOnlyKey }), 403, "insufficient_scope")
    expect(await written()).toEqual(before)
    expect((await exportOf(conversations.orgAlpha, agentsOnlyKey)).status).toBe(200)
  })
})

describe("GET /executions", () => {
  it("lists the organization's executions newest activity first in summary view, filtered by kind, status and since", async () => {
    const all = await server.request("GET", "/executions?limit=200")
    expect(all.status).toBe(200)
    const executions = all.body.executions as Array<any>
    const activity = (e: any) => e.finishedAt ?? e.startedAt
    expect(executions.map(activity)).toEqual([...executions.map(activity)].sort().reverse())
    expect(new Set(executions.map((e) => e.kind))).toEqual(new Set(["agent", "app"]))
    expect(executions.every((e) => e.status === "succeeded" && e.toolsCalled.every((t: object) => !("arguments" in t)))).toBe(true)
    const apps = (await server.request("GET", "/executions?kind=app")).body.executions
    expect(apps.map((e: any) => e.conversationId)).toEqual([conversations.annApp, conversations.bobApp, conversations.annApp])
    expect((await server.request("GET", "/executions?status=running")).body).toEqual({ executions: [], nextCursor: null })
    const late = (await server.request("GET", "/executions?since=2026-11-21T12:07:00Z&kind=app")).body.executions
    expect(late.map((e: any) => e.conversationId)).toEqual([conversations.annApp])
    const theirs = (await server.request("GET", "/executions", { key: otherKey })).body.executions
    expect(theirs.map((e: any) => e.conversationId)).toEqual([conversations.elsewhere])
  })

  it("lists only the kinds whose :execute scope the key holds, and refuses bad parameters with nothing written", async () => {
    const narrow = (await server.request("GET", "/executions?limit=200", { key: agentsOnlyKey })).body.executions
    expect(narrow.length).toBeGreaterThan(0)
    expect(narrow.every((e: any) => e.kind === "agent")).toBe(true)
    const before = await written()
    expectError(await server.request("GET", "/executions?kind=transaction", { key: agentsOnlyKey }), 403, "insufficient_scope")
    for (const query of ["?status=done", "?kind=robot", "?since=soon", "?limit=-1"]) {
      expectError(await server.request("GET", `/executions${query}`), 400, "invalid_request")
    }
    expect(await written()).toEqual(before)
  })

  it("pages with the cursor, each execution once", async () => {
    const all = (await server.request("GET", "/executions?limit=200")).body.executions.map((e: any) => e.id)
    const seen: Array<string> = []
    let cursor: string | null = null
    do {
      const page: any = (await server.request("GET", `/executions?limit=50${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`)).body
      seen.push(...page.executions.map((e: any) => e.id))
      cursor = page.nextCursor
    } while (cursor !== null)
    expect(seen).toEqual(all)
  })
})
