/**
 * Turns shared by two `svc serve` instances on one PostgreSQL database (issue 24): two turns of one
 * conversation sent at once to two instances run one after the other (the second turn's model sees
 * the first's reply, the stored history alternates), the lease of a crashed holder is taken over,
 * and a cancel sent to the instance that does not run the turn stops it, charging nothing.
 * (pg project only.)
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { expectError } from "../support/fixtures.js"
import { type FakeOpenAi, type FakeResponse, type SeenRequest, startFakeOpenAi } from "../support/fake-openai.js"
import { organizationOf, setCredits } from "../support/knowledge.js"
import { createTestDatabase } from "../support/postgres.js"
import { ManualClock, startTestServer, type TestServer } from "../support/server.js"
import { eventually } from "../support/timing.js"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"
import { createAgent } from "../runtime/support.js"

let database: { readonly url: string; readonly drop: () => Promise<void> }
let fake: FakeOpenAi
let answer: (request: SeenRequest) => FakeResponse
let a: TestServer
let b: TestServer
let agent: string

/** The texts of a model request's messages, as the model saw them. */
const seenTexts = (request: SeenRequest): Array<string> =>
  (request.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role !== "system").map((m) => `${m.role}: ${String(m.content)}`)
/** The last user message of a model request. */
const lastUserText = (request: SeenRequest) => seenTexts(request).filter((text) => text.startsWith("user: ")).at(-1)!.slice(6)

beforeAll(async () => {
  database = await createTestDatabase()
  fake = await startFakeOpenAi((request) => answer(request))
  const clock = new ManualClock()
  const options = { database: database.url, requestsPerMinute: 100_000, model: { baseUrl: fake.baseUrl, defaultModel: "fake-model", backoffMs: 1, maxAttempts: 1 } }
  a = await startTestServer({ clock, server: options })
  b = await startTestServer({ clock, key: a.key, server: options })
  agent = await createAgent(a, { model: "fake-model" })
})
afterAll(async () => {
  await a?.stop()
  await b?.stop()
  await fake?.close()
  await database?.drop()
})
beforeEach(async () => {
  await setCredits(a, 1_000)
})

const credits = async () => (await organizationOf(a)).creditsRemaining
const rows = <T extends object>(query: (db: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) =>
  a.admin(Effect.orDie(Effect.flatMap(SqlClient.SqlClient, query)))
const history = async (conversation: string) =>
  ((await b.request("GET", `/conversations/${conversation}/messages?limit=100`)).body.messages as Array<{ role: string; text: string }>).map(
    (m) => `${m.role}: ${m.text}`
  )

describe("two instances, one conversation", () => {
  it("turns sent at once to both run one after the other: the second's model sees the first's reply, the history alternates", async () => {
    // Every reply takes 300 ms: two turns running at once would both be in the model together.
    answer = (request) => ({ parts: [{ kind: "wait", ms: 300 }, { kind: "text", text: `reply to ${lastUserText(request)}` }] })
    const opened = await a.request("POST", `/agents/${agent}/conversation`, { body: { message: "opening" } })
    expect({ status: opened.status, body: opened.body }).toMatchObject({ status: 200 })
    const conversation = opened.body.conversation_id as string
    for (let round = 0; round < 3; round++) {
      const seen = fake.requests.length
      const [first, second] = await Promise.all([
        a.request("POST", `/agents/${agent}/conversation`, { body: { message: `from a ${round}`, conversation_id: conversation } }),
        b.request("POST", `/agents/${agent}/conversation`, { body: { message: `from b ${round}`, conversation_id: conversation } })
      ])
      expect([first.status, second.status]).toEqual([200, 200])
      expect(first.body.reply).toBe(`reply to from a ${round}`)
      expect(second.body.reply).toBe(`reply to from b ${round}`)
      const [earlier, later] = fake.requests.slice(seen)
      expect(fake.requests).toHaveLength(seen + 2)
      // The later model call saw the earlier turn whole: its message and its reply, before its own message.
      const earlierMessage = lastUserText(earlier!)
      expect(seenTexts(later!).slice(-3)).toEqual([`user: ${earlierMessage}`, `assistant: reply to ${earlierMessage}`, `user: ${lastUserText(later!)}`])
    }
    const stored = await history(conversation)
    expect(stored).toHaveLength(14)
    stored.forEach((text, i) => expect(text.startsWith(i % 2 === 0 ? "user: " : "assistant: ")).toBe(true))
    for (let i = 0; i < stored.length; i += 2) expect(stored[i + 1]).toBe(`assistant: reply to ${stored[i]!.slice(6)}`)
    expect(await rows((db) => db`SELECT conversation_id FROM conversation_locks`)).toEqual([])
  })

  it("the lease of an instance that is gone is taken over by the next turn", async () => {
    answer = (request) => ({ parts: [{ kind: "text", text: `reply to ${lastUserText(request)}` }] })
    const opened = await b.request("POST", `/agents/${agent}/conversation`, { body: { message: "before the crash" } })
    const conversation = opened.body.conversation_id as string
    await a.admin(
      Effect.orDie(
        Effect.flatMap(SqlClient.SqlClient, (db) =>
          db`INSERT INTO conversation_locks (conversation_id, claimed_by, token, taken_at) VALUES (${conversation}, 'instance-that-crashed', 'stale', 0)`.pipe(
            writing(writesEveryTable)
          )
        )
      )
    )
    const next = await a.request("POST", `/agents/${agent}/conversation`, { body: { message: "after the crash", conversation_id: conversation } })
    expect(next.status).toBe(200)
    expect(next.body.reply).toBe("reply to after the crash")
    expect(await history(conversation)).toEqual(["user: before the crash", "assistant: reply to before the crash", "user: after the crash", "assistant: reply to after the crash"])
    expect(await rows((db) => db`SELECT conversation_id FROM conversation_locks`)).toEqual([])
  })
})

describe("a cancel sent to the other instance", () => {
  it("stops the turn where it runs: the caller gets 409 run_cancelled, the execution is cancelled, nothing is charged", async () => {
    answer = () => ({ parts: [{ kind: "text", text: "partial" }, { kind: "hang" }] })
    const before = await credits()
    const seen = fake.requests.length
    const call = a.request("POST", `/agents/${agent}/conversation`, { body: { message: "a long one" } })
    await eventually(async () => fake.requests.length > seen)
    const [running] = await rows<{ id: string; claimed_by: string }>((db) => db`SELECT id, claimed_by FROM executions WHERE status = 'running'`)
    const aborted = fake.nextAbort()
    const cancelled = await b.request("POST", `/executions/${running!.id}/cancel`)
    expect(cancelled.status).toBe(200)
    expect(cancelled.body).toMatchObject({ ok: true, execution: { id: running!.id, status: "cancelled", creditsCharged: 0, error: expect.any(String) } })
    await aborted
    expectError(await call, 409, "run_cancelled")
    expect(await credits()).toBe(before)
    const [after] = await rows<{ status: string; credits_charged: number }>((db) => db`SELECT status, credits_charged FROM executions WHERE id = ${running!.id}`)
    expect(after).toEqual({ status: "cancelled", credits_charged: 0 })
    // Cancelled again, through either instance: answered unchanged.
    for (const instance of [a, b]) {
      const again = await instance.request("POST", `/executions/${running!.id}/cancel`)
      expect(again.body.execution).toMatchObject({ status: "cancelled", creditsCharged: 0 })
    }
    expect(await credits()).toBe(before)
  })

  it("stops a turn of a conversation run by the other instance, whose next turn then runs", async () => {
    answer = () => ({ parts: [{ kind: "text", text: "half" }, { kind: "hang" }] })
    const seen = fake.requests.length
    const call = b.request("POST", `/agents/${agent}/conversation`, { body: { message: "first" } })
    await eventually(async () => fake.requests.length > seen)
    const [running] = await rows<{ id: string; conversation_id: string }>((db) => db`SELECT id, conversation_id FROM executions WHERE status = 'running'`)
    const cancelled = await a.request("POST", `/executions/${running!.id}/cancel`)
    expect(cancelled.body.execution).toMatchObject({ status: "cancelled", creditsCharged: 0 })
    expectError(await call, 409, "run_cancelled")
    answer = (request) => ({ parts: [{ kind: "text", text: `reply to ${lastUserText(request)}` }] })
    const next = await a.request("POST", `/agents/${agent}/conversation`, { body: { message: "second", conversation_id: running!.conversation_id } })
    expect(next.body.reply).toBe("reply to second")
    // Answered whole, the cancelled turn had no reply yet: nothing of it is stored but its message.
    expect(await history(running!.conversation_id)).toEqual(["user: first", "user: second", "assistant: reply to second"])
  })
})
