/**
 * Agent runs over HTTP with the builtin model: answers from a Knowledgebase with citations, one
 * execution and one credit per turn, conversations kept and checked, refusals that write and
 * charge nothing, concurrent runs on the last credit, draft runs, execution and conversation reads.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Exit } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { expectError, insertKnowledgebases, organizationId, unknownId } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { organizationOf, setCredits } from "../support/knowledge.js"
import { readySource } from "../support/sources.js"
import { AccountsService } from "../../server/identity/service.js"
import { RunService } from "../../server/runtime/runs/service.js"
import { count, createAgent, openStream } from "./support.js"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"

let server: TestServer
let orgId: string
beforeAll(async () => {
  server = await startTestServer({ server: { model: {} } })
  orgId = await organizationId(server)
})
afterAll(() => server.stop())
beforeEach(async () => {
  server.clock.advance(60_000)
  await setCredits(server, 1_000)
})

const credits = async () => (await organizationOf(server)).creditsRemaining
const talk = (agent: string, body: unknown, key?: string) =>
  server.request("POST", `/agents/${agent}/conversation`, { body, ...(key === undefined ? {} : { key }) })
const rowsWritten = async () => ({
  executions: await count(server, "SELECT count(*) AS n FROM executions"),
  messages: await count(server, "SELECT count(*) AS n FROM messages"),
  conversations: await count(server, "SELECT count(*) AS n FROM conversations")
})

let handbookAgent: string
const term = "quokkafrobnicate"
beforeAll(async () => {
  const [kb] = await insertKnowledgebases(server, { count: 1, prefix: "Handbook" })
  await readySource(server, kb!.id, {
    name: "Refund handbook",
    markdown: true,
    text: `# Refunds\n\nA ${term} refund is paid within thirty days of the request.\n`
  })
  handbookAgent = await createAgent(server, { knowledgebaseIds: [kb!.id], instructions: "Be brief." })
})

describe("a turn with the builtin model", () => {
  it("answers from the Knowledgebase with a citation, records the execution and charges one credit", async () => {
    const before = await credits()
    const response = await talk(handbookAgent, { message: `How does a ${term} refund work?` })
    expect(response.status).toBe(200)
    expect(Object.keys(response.body).sort()).toEqual(["conversation_id", "executionId", "reply"])
    expect(response.body.reply).toContain("thirty days")
    expect(response.body.reply).toContain("Refund handbook")
    expect(await credits()).toBe(before - 1)

    const execution = await server.request("GET", `/executions/${response.body.executionId}`)
    expect(execution.status).toBe(200)
    expect(execution.body.execution).toMatchObject({
      id: response.body.executionId,
      kind: "agent",
      targetId: handbookAgent,
      version: 1,
      draft: false,
      conversationId: response.body.conversation_id,
      status: "succeeded",
      creditsCharged: 1,
      error: null,
      toolsCalled: [{ name: "search_knowledgebases", arguments: { query: `How does a ${term} refund work?` } }]
    })
    expect(execution.body.execution.steps.map((step: any) => step.type)).toContain("tool")
    expect(execution.body.execution.finishedAt).not.toBeNull()
    const summary = await server.request("GET", `/executions/${response.body.executionId}?view=summary`)
    expect(summary.body.execution.toolsCalled).toEqual([{ name: "search_knowledgebases" }])

    const conversation = await server.request("GET", `/conversations/${response.body.conversation_id}`)
    expect(conversation.body).toEqual({
      conversation: { id: response.body.conversation_id, targetKind: "agent", targetId: handbookAgent, createdAt: expect.any(String), updatedAt: expect.any(String) }
    })
    const messages = await server.request("GET", `/conversations/${response.body.conversation_id}/messages`)
    expect(messages.body.messages.map((m: any) => [m.role, m.text, m.executionId])).toEqual([
      ["user", `How does a ${term} refund work?`, response.body.executionId],
      ["assistant", response.body.reply, response.body.executionId]
    ])
    expect(messages.body.nextCursor).toBeNull()
  })

  it("continues a conversation; messages page oldest first", async () => {
    const first = await talk(handbookAgent, { message: `${term} one` })
    const second = await talk(handbookAgent, { message: `${term} two`, conversation_id: first.body.conversation_id })
    expect(second.status).toBe(200)
    expect(second.body.conversation_id).toBe(first.body.conversation_id)
    const page1 = await server.request("GET", `/conversations/${first.body.conversation_id}/messages?limit=3`)
    expect(page1.body.messages.map((m: any) => m.text.slice(0, term.length + 4))).toEqual([`${term} one`, expect.any(String), `${term} two`])
    const page2 = await server.request("GET", `/conversations/${first.body.conversation_id}/messages?limit=3&cursor=${page1.body.nextCursor}`)
    expect(page2.body.messages.map((m: any) => m.role)).toEqual(["assistant"])
    expect(page2.body.nextCursor).toBeNull()
  })

  it("refuses unknown body properties and a missing message, running nothing", async () => {
    const before = await rowsWritten()
    expectError(await talk(handbookAgent, { message: "hi", temperature: 1 }), 400, "invalid_request")
    expectError(await talk(handbookAgent, {}), 400, "invalid_request")
    expect(await rowsWritten()).toEqual(before)
  })
})

describe("not found", () => {
  it("a never-published Agent is 404 to the conversation endpoint; its draft runs", async () => {
    const draftOnly = await createAgent(server, { name: "Unpublished" }, { publish: false })
    const before = { ...(await rowsWritten()), credits: await credits() }
    expectError(await talk(draftOnly, { message: "hello" }), 404, "not_found")
    expectError(await talk(unknownId(), { message: "hello" }), 404, "not_found")
    expect({ ...(await rowsWritten()), credits: await credits() }).toEqual(before)

    const draft = await server.request("POST", `/agents/${draftOnly}/draft/run`, { body: { message: "hello" } })
    expect(draft.status).toBe(200)
    expect(draft.body.reply).toMatch(/Knowledgebase/)
    const execution = await server.request("GET", `/executions/${draft.body.executionId}`)
    expect(execution.body.execution).toMatchObject({ draft: true, version: null, status: "succeeded", creditsCharged: 1 })
  })

  it("a conversation_id of another Agent or another organization is 404, nothing written or charged", async () => {
    const other = await createAgent(server, { name: "Other" })
    const theirs = await talk(other, { message: "hello" })
    expect(theirs.status).toBe(200)
    const before = { ...(await rowsWritten()), credits: await credits() }
    expectError(await talk(handbookAgent, { message: "hello", conversation_id: theirs.body.conversation_id }), 404, "not_found")
    expectError(await talk(handbookAgent, { message: "hello", conversation_id: unknownId() }), 404, "not_found")

    const otherOrgKey = await server.createOrganization("runs-other")
    await setCredits(server, 10, "runs-other")
    expectError(await talk(handbookAgent, { message: "hello" }, otherOrgKey), 404, "not_found")
    expectError(await server.request("GET", `/conversations/${theirs.body.conversation_id}`, { key: otherOrgKey }), 404, "not_found")
    expectError(await server.request("GET", `/executions/${theirs.body.executionId}`, { key: otherOrgKey }), 404, "not_found")
    expect({ ...(await rowsWritten()), credits: await credits() }).toEqual(before)
  })
})

describe("scopes", () => {
  it("executions are read with any :execute scope; conversations need their target's", async () => {
    const turn = await talk(handbookAgent, { message: "scopes" })
    const flowsOnly = await server.createKey({ name: "flows", scopes: ["flows:execute"] })
    const readOnly = await server.createKey({ name: "reader", scopes: ["agents:read"] })
    expect((await server.request("GET", `/executions/${turn.body.executionId}`, { key: flowsOnly })).status).toBe(200)
    expectError(await server.request("GET", `/executions/${turn.body.executionId}`, { key: readOnly }), 403, "insufficient_scope")
    expectError(await server.request("GET", `/conversations/${turn.body.conversation_id}`, { key: flowsOnly }), 403, "insufficient_scope")
    expectError(await server.request("GET", `/conversations/${turn.body.conversation_id}/messages`, { key: flowsOnly }), 403, "insufficient_scope")
  })
})

describe("credits", () => {
  it("402 with a balance of 0: no execution, no message, no conversation, no charge", async () => {
    const first = await talk(handbookAgent, { message: "before" })
    await setCredits(server, 0)
    const before = await rowsWritten()
    expectError(await talk(handbookAgent, { message: "hello" }), 402, "insufficient_credits")
    expectError(await talk(handbookAgent, { message: "hello", conversation_id: first.body.conversation_id }), 402, "insufficient_credits")
    const streamed = await openStream(server, `/agents/${handbookAgent}/conversation`, { message: "hello", stream: true })
    expect(streamed.response.status).toBe(402)
    expect(await rowsWritten()).toEqual(before)
    expect(await credits()).toBe(0)
  })

  it("concurrent runs on the last credit: exactly one runs and is charged, the balance never goes below 0", async () => {
    await setCredits(server, 1)
    const before = await count(server, "SELECT count(*) AS n FROM executions WHERE organization_id = ?", [orgId])
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => talk(handbookAgent, { message: `${term} race ${i}` })))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 402, 402, 402, 402, 402])
    const org = await organizationOf(server)
    expect(org.creditsRemaining).toBe(0)
    expect(await count(server, "SELECT count(*) AS n FROM executions WHERE organization_id = ?", [orgId])).toBe(before + 1)
  })
})

describe("the credit is reserved by one conditional UPDATE", () => {
  it("turns that all passed their checks with one credit left: exactly one runs, the others are refused before writing", async () => {
    await setCredits(server, 1)
    const before = await rowsWritten()
    const exits = await server.admin(
      Effect.gen(function* () {
        const actor = yield* Effect.flatMap(AccountsService, (accounts) => accounts.authenticate(server.key))
        const runs = yield* RunService
        const prepared = yield* Effect.forEach([1, 2, 3], (i) => runs.prepareAgentTurn(actor, handbookAgent, { message: `${term} ${i}` }, { draft: false }))
        return yield* Effect.forEach(prepared, (turn) => Effect.exit(runs.runAgentTurn(turn)), { concurrency: "unbounded" })
      })
    )
    expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
    const refusals = exits.filter(Exit.isFailure).map((exit) => JSON.stringify(exit.cause))
    expect(refusals).toHaveLength(2)
    for (const refusal of refusals) expect(refusal).toContain("insufficient_credits")
    expect(await credits()).toBe(0)
    expect(await rowsWritten()).toEqual({ executions: before.executions + 1, messages: before.messages + 2, conversations: before.conversations + 1 })
  })
})

describe("streaming with the builtin model", () => {
  it("start, delta, one final done equal to the non-streamed answer's shape", async () => {
    const streamed = await openStream(server, `/agents/${handbookAgent}/conversation`, { message: `${term} refund`, stream: true })
    expect(streamed.response.status).toBe(200)
    expect(streamed.response.headers.get("content-type")).toMatch(/^text\/event-stream/)
    const events = (await streamed.all()).filter((e) => e.event !== "comment")
    expect(events[0]!.event).toBe("start")
    expect(Object.keys(events[0]!.data).sort()).toEqual(["conversation_id", "executionId"])
    const done = events[events.length - 1]!
    expect(done.event).toBe("done")
    expect(events.filter((e) => e.event === "done" || e.event === "error")).toHaveLength(1)
    expect(done.data).toEqual({ reply: expect.any(String), conversation_id: events[0]!.data.conversation_id, executionId: events[0]!.data.executionId })
    expect(events.filter((e) => e.event === "delta").map((e) => e.data.text).join("")).toBe(done.data.reply)
    expect(events.filter((e) => e.event === "tool").map((e) => e.data)).toEqual([{ name: "search_knowledgebases" }])
    const plain = await talk(handbookAgent, { message: `${term} refund` })
    expect(Object.keys(done.data).sort()).toEqual(Object.keys(plain.body).sort())
    expect(done.data.reply).toBe(plain.body.reply)
  })
})

describe("a restart", () => {
  it("finishes executions a stopped server left running as failed and gives their credits back", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "svc-runs-restart-"))
    const first = await startTestServer({ dataDir, server: { model: {} } })
    const key = first.key
    try {
      await setCredits(first, 5)
      const agent = await createAgent(first, { name: "Interrupted" })
      const turn = await first.request("POST", `/agents/${agent}/conversation`, { body: { message: "hello" } })
      expect(turn.status).toBe(200)
      // A run the process never finished: its credit reserved, its execution running.
      const org = await organizationId(first)
      await first.admin(
        Effect.flatMap(SqlClient.SqlClient, (db) =>
          Effect.all([
            db`UPDATE organizations SET credits_remaining = credits_remaining - 1, credits_used = credits_used + 1 WHERE id = ${org}`,
            db`UPDATE executions SET status = 'running', finished_at = NULL WHERE id = ${turn.body.executionId}`
          ]).pipe(writing(writesEveryTable))
        ).pipe(Effect.orDie)
      )
      expect((await organizationOf(first)).creditsRemaining).toBe(3)
    } finally {
      await first.stop()
    }
    const second = await startTestServer({ dataDir, key, server: { model: {} } })
    try {
      expect((await organizationOf(second)).creditsRemaining).toBe(4)
      const executions = await count(second, "SELECT count(*) AS n FROM executions WHERE status = 'running'")
      expect(executions).toBe(0)
      const failed = await count(second, "SELECT count(*) AS n FROM executions WHERE status = 'failed' AND credits_charged = 0 AND error LIKE 'The server stopped%'")
      expect(failed).toBe(1)
    } finally {
      await second.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
