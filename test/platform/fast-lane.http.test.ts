/**
 * The fast lane (`server/http/fast-lane.ts`) answers exactly as the API's router would:
 * every request below goes to two servers on the same hand-driven clock, one with the lane and one
 * without, and both answers must match (status, media type, the headers that matter, and the body
 * with ids, request ids and cursors masked). The lane's own record of what it did proves which
 * path answered: served by the lane (refusals of the admission and of the operation included),
 * handed on to the router after it read a request that does not decode (the router's 400), or
 * never taken, left to the router by the request's shape alone (the lane saw nothing). No
 * operation has a path of its own: creates with an `Idempotency-Key`, deprecated fields, deletes
 * and reads of every family go the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { FastLaneOutcome } from "../../server/http/fast-lane.js"
import { ManualClock, startTestServer, type TestResponse, type TestServer } from "../support/server.js"

/** One server of a pair and what its lane did. */
interface Side {
  readonly server: TestServer
  readonly seen: Array<FastLaneOutcome>
}

const startSide = async (lane: boolean, requestsPerMinute: number): Promise<Side> => {
  const seen: Array<FastLaneOutcome> = []
  const server = await startTestServer({
    clock: new ManualClock(),
    server: { requestsPerMinute, fastLane: lane ? { observe: (outcome) => void seen.push(outcome) } : { enabled: false } }
  })
  return { server, seen }
}

let laned: Side
let plain: Side
let limitedLaned: Side
let limitedPlain: Side

beforeAll(async () => {
  ;[laned, plain, limitedLaned, limitedPlain] = await Promise.all([startSide(true, 1_000_000), startSide(false, 1_000_000), startSide(true, 2), startSide(false, 2)])
})
afterAll(async () => {
  await Promise.all([laned, plain, limitedLaned, limitedPlain].map((side) => side?.server.stop()))
})

const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g

/** What must be equal between the two answers. */
const comparable = (response: TestResponse) => ({
  status: response.status,
  contentType: response.headers.get("content-type"),
  requestId: /^req_[0-9a-f]{32}$/.test(response.headers.get("x-request-id") ?? ""),
  retryAfter: response.headers.get("retry-after"),
  deprecation: response.headers.get("deprecation"),
  replayed: response.headers.get("idempotent-replayed"),
  body: response.text.replace(uuid, "<id>").replace(/"nextCursor":"[^"]*"/g, '"nextCursor":"<cursor>"')
})

type Send = (server: TestServer) => Promise<TestResponse>

/**
 * Sends `send` to both servers of a pair, expects equal answers and returns the lane side's answer
 * with what its lane did (nothing when it never took the request).
 */
const both = async (send: Send, pair: readonly [Side, Side] = [laned, plain]) => {
  const [withLane, without] = pair
  const before = withLane.seen.length
  const answer = await send(withLane.server)
  const expected = await send(without.server)
  expect(comparable(answer)).toEqual(comparable(expected))
  expect(without.seen).toEqual([])
  return { answer, lane: withLane.seen.slice(before) }
}

/** Runs `setup` on both servers of the main pair (same calls, same clock), returning each side's value. */
const onBoth = async <A>(setup: (server: TestServer) => Promise<A>): Promise<readonly [A, A]> =>
  [await setup(laned.server), await setup(plain.server)] as const

describe("POST /knowledgebases", () => {
  it("a plain create is served by the lane: 201 with the declared Knowledgebase", async () => {
    const { answer, lane } = await both((s) => s.request("POST", "/knowledgebases", { body: { name: "Lane", description: "Fast." } }))
    expect(answer.status).toBe(201)
    expect(answer.body.knowledgebase).toMatchObject({ name: "Lane", description: "Fast.", counts: { sources: 0, pages: 0 } })
    expect(lane).toEqual(["served"])
  })

  it("a body that does not decode, has unknown fields or is not JSON is handed on and refused as by the router", async () => {
    for (const body of [{ name: 5 }, { name: "x", extra: 1 }, { description: "no name" }, '{"name":', "[]"]) {
      const { answer, lane } = await both((s) => s.request("POST", "/knowledgebases", { body }))
      expect(answer.status).toBe(400)
      expect(answer.body.error.code).toBe("invalid_request")
      expect(lane).toEqual(["handed-on"])
    }
  })

  it("keys that fail (malformed, unknown, lacking the scope) get the router's refusals from the lane", async () => {
    const [readOnlyA, readOnlyB] = await onBoth((s) => s.createKey({ name: "read only", scopes: ["knowledge:read"] }))
    const cases: ReadonlyArray<readonly [string, string, number]> = [
      ["not-a-key", "not-a-key", 401],
      [`sk_live_${"0".repeat(40)}`, `sk_live_${"0".repeat(40)}`, 401],
      [readOnlyA, readOnlyB, 403]
    ]
    for (const [keyA, keyB, status] of cases) {
      const keys = new Map([[laned.server, keyA], [plain.server, keyB]])
      const { answer, lane } = await both((s) => s.request("POST", "/knowledgebases", { key: keys.get(s)!, body: { name: "Refused" } }))
      expect(answer.status).toBe(status)
      expect(lane).toEqual(["served"])
    }
  })

  it("no key and an Idempotency-Key (first, replay, reuse with another body) are the lane's like any request", async () => {
    const noKey = await both((s) => s.request("POST", "/knowledgebases", { key: null, body: { name: "x" } }))
    expect(noKey.answer.status).toBe(401)
    expect(noKey.lane).toEqual(["served"])
    const idempotent = (s: TestServer) => s.request("POST", "/knowledgebases", { body: { name: "Once" }, headers: { "idempotency-key": "lane-once" } })
    const first = await both(idempotent)
    expect([first.answer.status, first.lane]).toEqual([201, ["served"]])
    const replay = await both(idempotent)
    expect(replay.answer.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.lane).toEqual(["served"])
    expect(replay.answer.body).toEqual(first.answer.body)
    const reused = await both((s) => s.request("POST", "/knowledgebases", { body: { name: "Twice" }, headers: { "idempotency-key": "lane-once" } }))
    expect([reused.answer.status, reused.answer.body.error.code, reused.lane]).toEqual([409, "conflict", ["served"]])
    const tooLong = await both((s) => s.request("POST", "/knowledgebases", { body: { name: "Long" }, headers: { "idempotency-key": "k".repeat(65) } }))
    expect([tooLong.answer.status, tooLong.lane]).toEqual([400, ["handed-on"]])
  })

  it("requests it does not take go to the API untouched: another JSON type, a chunked body, a trailing slash", async () => {
    const vendorJson = await both((s) => s.request("POST", "/knowledgebases", { body: { name: "Vendor" }, headers: { "content-type": "application/vnd.api+json" } }))
    expect(vendorJson.answer.status).toBe(201)
    const chunked = await both(async (s) => {
      const body = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"name":"Chunked"}'))
          controller.close()
        }
      })
      const response = await fetch(`${s.baseUrl}/knowledgebases`, {
        method: "POST",
        headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
        body,
        duplex: "half"
      } as RequestInit)
      const text = await response.text()
      return { status: response.status, headers: response.headers, body: JSON.parse(text), text }
    })
    expect(chunked.answer.status).toBe(201)
    const trailingSlash = await both((s) => s.request("POST", "/knowledgebases/", { body: { name: "Slash" } }))
    expect(trailingSlash.lane).toEqual([])
    for (const taken of [vendorJson, chunked]) expect(taken.lane).toEqual([])
  })

  it("the plan cap is the operation's own refusal, answered by the lane, with nothing written", async () => {
    const [capA, capB] = await onBoth((s) => s.createOrganization("capped", "pro"))
    const keys = new Map([[laned.server, capA], [plain.server, capB]])
    for (let i = 0; i < 50; i++) {
      const created = await both((s) => {
        s.clock.advance(1)
        return s.request("POST", "/knowledgebases", { key: keys.get(s)!, body: { name: `KB ${i}` } })
      })
      expect(created.answer.status).toBe(201)
    }
    const refused = await both((s) => s.request("POST", "/knowledgebases", { key: keys.get(s)!, body: { name: "One too many" } }))
    expect(refused.answer.status).toBe(403)
    expect(refused.answer.body.error.code).toBe("plan_limit")
    expect(refused.lane).toEqual(["served"])
    const listed = await both((s) => s.request("GET", "/knowledgebases?limit=200", { key: keys.get(s)! }))
    expect(listed.answer.body.knowledgebases).toHaveLength(50)
  })

  it("over the key's rate: 429 with Retry-After from the lane as from the router", async () => {
    const pair = [limitedLaned, limitedPlain] as const
    for (let i = 0; i < 2; i++) expect((await both((s) => s.request("POST", "/knowledgebases", { body: { name: `R${i}` } }), pair)).lane).toEqual(["served"])
    const limited = await both((s) => s.request("POST", "/knowledgebases", { body: { name: "R2" } }), pair)
    expect(limited.answer.status).toBe(429)
    expect(limited.answer.headers.get("retry-after")).toBe("60")
    expect(limited.lane).toEqual(["served"])
  })

  it("a key refused for its scope counts once against its rate, as through the router", async () => {
    const pair = [limitedLaned, limitedPlain] as const
    const keys = new Map<TestServer, string>()
    for (const side of pair) keys.set(side.server, await side.server.createKey({ name: "read only, limited", scopes: ["knowledge:read"] }))
    const refused = await both((s) => s.request("POST", "/knowledgebases", { key: keys.get(s)!, body: { name: "No scope" } }), pair)
    expect(refused.answer.status).toBe(403)
    expect(refused.lane).toEqual(["served"])
    // The key's second request of the minute: within the limit of 2 only if the refusal counted once.
    const next = await both((s) => s.request("GET", "/knowledgebases/00000000-0000-4000-8000-000000000000", { key: keys.get(s)! }), pair)
    expect(next.answer.status).toBe(404)
  })
})

describe("GET /knowledgebases", () => {
  it("pages, fields, cursors and bad values are served by the lane; unknown parameters never taken", async () => {
    const [listKeyA, listKeyB] = await onBoth((s) => s.createOrganization("listing", "pro"))
    const keys = new Map([[laned.server, listKeyA], [plain.server, listKeyB]])
    for (let i = 0; i < 5; i++) {
      await both((s) => {
        s.clock.advance(1)
        return s.request("POST", "/knowledgebases", { key: keys.get(s)!, body: { name: `Listed ${i}` } })
      })
    }
    const first = await both((s) => s.request("GET", "/knowledgebases?limit=2&fields=name", { key: keys.get(s)! }))
    expect(first.answer.body.knowledgebases).toEqual([{ name: "Listed 0" }, { name: "Listed 1" }])
    expect(first.lane).toEqual(["served"])
    const cursors = new Map<TestServer, string>()
    for (const side of [laned, plain]) {
      cursors.set(side.server, (await side.server.request("GET", "/knowledgebases?limit=2", { key: keys.get(side.server)! })).body.nextCursor)
    }
    const second = await both((s) => s.request("GET", `/knowledgebases?limit=2&cursor=${encodeURIComponent(cursors.get(s)!)}`, { key: keys.get(s)! }))
    expect(second.answer.body.knowledgebases.map((kb: { name: string }) => kb.name)).toEqual(["Listed 2", "Listed 3"])
    expect(second.lane).toEqual(["served"])
    for (const query of ["limit=0", "limit=abc", "limit=1&limit=2", "cursor=garbage", "fields=nope"]) {
      const refused = await both((s) => s.request("GET", `/knowledgebases?${query}`, { key: keys.get(s)! }))
      expect(refused.answer.status).toBe(400)
      expect(refused.lane.length).toBe(1)
    }
    const unknown = await both((s) => s.request("GET", "/knowledgebases?color=red", { key: keys.get(s)! }))
    expect(unknown.answer.status).toBe(400)
    expect(unknown.lane).toEqual([])
  })
})

describe("PATCH /knowledgebases/{id}/pages/{pageId}", () => {
  it("a patch is served by the lane; a bad operation and a missing page answer as before", async () => {
    const [kbA, kbB] = await onBoth(async (s) => (await s.request("POST", "/knowledgebases", { body: { name: "Pages" } })).body.knowledgebase.id as string)
    const kbs = new Map([[laned.server, kbA], [plain.server, kbB]])
    const [pageA, pageB] = await onBoth(
      async (s) => (await s.request("POST", `/knowledgebases/${kbs.get(s)}/pages`, { body: { title: "Returns", bodyMarkdown: "# Returns\n\n5 days.\n" } })).body.page.id as string
    )
    const pages = new Map([[laned.server, pageA], [plain.server, pageB]])
    const pathOf = (s: TestServer, page = pages.get(s)!) => `/knowledgebases/${kbs.get(s)}/pages/${page}`
    const patched = await both((s) => s.request("PATCH", pathOf(s), { body: { patch: [{ op: "replace", oldString: "5 days", newString: "3 days" }] } }))
    expect(patched.answer.status).toBe(200)
    expect(patched.lane).toEqual(["served"])
    const missingText = await both((s) => s.request("PATCH", pathOf(s), { body: { patch: [{ op: "replace", oldString: "absent", newString: "x" }] } }))
    expect(missingText.answer.status).toBeGreaterThanOrEqual(400)
    expect(missingText.lane).toEqual(["served"])
    const badOp = await both((s) => s.request("PATCH", pathOf(s), { body: { patch: [{ op: "explode" }] } }))
    expect(badOp.answer.status).toBe(400)
    expect(badOp.lane).toEqual(["handed-on"])
    const missing = await both((s) => s.request("PATCH", pathOf(s, "00000000-0000-4000-8000-000000000000"), { body: { patch: [{ op: "append", text: "x" }] } }))
    expect(missing.answer.status).toBe(404)
    expect(missing.lane).toEqual(["served"])
    const after = await both((s) => s.request("GET", `${pathOf(s)}`))
    expect(after.answer.text).toContain("3 days")
  })
})

describe("POST /end-users", () => {
  it("provisioning is served by the lane (201, then 200 for the same email), deprecated per-user grants with their Deprecation header", async () => {
    const created = await both((s) => s.request("POST", "/end-users", { body: { email: "Lane@Example.com" } }))
    expect(created.answer.status).toBe(201)
    expect(created.lane).toEqual(["served"])
    const updated = await both((s) => s.request("POST", "/end-users", { body: { email: "lane@example.com" } }))
    expect(updated.answer.status).toBe(200)
    expect(updated.lane).toEqual(["served"])
    const grants = await both((s) => s.request("POST", "/end-users", { body: { email: "grants@example.com", grants: [{ targetKind: "app", targetId: "00000000-0000-4000-8000-000000000000" }] } }))
    expect(grants.answer.status).toBeGreaterThanOrEqual(400)
    expect(grants.answer.headers.get("deprecation")).not.toBeNull()
    expect(grants.lane).toEqual(["served"])
    const unknownPlan = await both((s) => s.request("POST", "/end-users", { body: { email: "plan@example.com", tierPlanIds: ["00000000-0000-4000-8000-000000000000"] } }))
    expect(unknownPlan.answer.status).toBe(422)
    expect(unknownPlan.answer.body.error.code).toBe("tier_not_found")
    expect(unknownPlan.lane).toEqual(["served"])
  })
})
