import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import {
  InvalidApiKeyError,
  type KnowledgebasesListItem,
  NotFoundError,
  PagePromise,
  type PagesListItem,
  Svc,
  SvcError
} from "../../sdk/index.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { startRelay } from "./local-http.js"

let server: TestServer
let svc: Svc

beforeAll(async () => {
  server = await startTestServer()
  svc = new Svc({ baseUrl: server.baseUrl, apiKey: server.key })
})
afterAll(async () => {
  await svc?.close()
  await server?.stop()
})

describe("SDK against a real server", () => {
  it("creates, lists and reads Knowledgebases", async () => {
    const { knowledgebase } = await svc.knowledgebases.create({ name: "Handbook", description: "How we work." })
    expect(knowledgebase).toMatchObject({ name: "Handbook", description: "How we work." })

    const page = await svc.knowledgebases.list()
    expect(page.knowledgebases.map((kb) => kb.id)).toContain(knowledgebase.id)
    expect(page.nextCursor).toBeNull()

    const read = await svc.knowledgebases.get(knowledgebase.id)
    expect(read.knowledgebase.id).toBe(knowledgebase.id)
    expect(read.knowledgebase.name).toBe("Handbook")
  })

  it("iterates every item across pages with for await", async () => {
    for (let i = 0; i < 6; i++) await svc.knowledgebases.create({ name: `Paged ${i}` })
    const all = (await svc.knowledgebases.list({ limit: 50 })).knowledgebases.map((kb) => kb.id)
    expect(all.length).toBeGreaterThanOrEqual(7)

    const first = await svc.knowledgebases.list({ limit: 2 })
    expect(first.knowledgebases).toHaveLength(2)
    expect(first.nextCursor).toEqual(expect.any(String))

    const seen: string[] = []
    const list = svc.knowledgebases.list({ limit: 2 })
    expect(list).toBeInstanceOf(PagePromise)
    for await (const kb of list) {
      expectTypeOf(kb).toEqualTypeOf<KnowledgebasesListItem>()
      seen.push(kb.id ?? "(narrowed away)")
    }
    expect(seen).toEqual(all)

    expect((await svc.knowledgebases.list({ limit: 3 }).toArray({ max: 5 })).map((kb) => kb.id)).toEqual(all.slice(0, 5))
    let pages = 0
    for await (const page of svc.knowledgebases.list({ limit: 3 }).pages()) pages += page.knowledgebases.length > 0 ? 1 : 0
    expect(pages).toBe(Math.ceil(all.length / 3))
  })

  it("iterates a Knowledgebase's pages across pages with for await, like every other list", async () => {
    const { knowledgebase } = await svc.knowledgebases.create({ name: "Paged pages" })
    for (let i = 0; i < 5; i++) await svc.pages.create(knowledgebase.id, { title: `Page ${i}`, bodyMarkdown: `Body ${i}.` })
    const all = (await svc.pages.list(knowledgebase.id, { limit: 50 })).pages.map((page) => page.id)
    expect(all).toHaveLength(5)

    const list = svc.pages.list(knowledgebase.id, { limit: 2 })
    expect(list).toBeInstanceOf(PagePromise)
    const first = await list
    expect(first.pages).toHaveLength(2)
    expect(first.nextCursor).toEqual(expect.any(String))
    const seen: string[] = []
    for await (const page of list) {
      expectTypeOf(page).toEqualTypeOf<PagesListItem>()
      seen.push(page.id!)
    }
    expect(seen).toEqual(all)
    expect((await svc.pages.list(knowledgebase.id, { limit: 2 }).toArray({ max: 3 })).map((page) => page.id)).toEqual(all.slice(0, 3))
  })

  it("raises NotFoundError with status, code and the response's request id", async () => {
    const relay = await startRelay(server.origin)
    const viaRelay = new Svc({ baseUrl: relay.baseUrl, apiKey: server.key })
    try {
      const error = await viaRelay.knowledgebases.get("00000000-0000-4000-8000-000000000000").catch((e: unknown) => e)
      expect(error).toBeInstanceOf(NotFoundError)
      expect(error).toBeInstanceOf(SvcError)
      const notFound = error as NotFoundError
      expect(notFound.status).toBe(404)
      expect(notFound.code).toBe("not_found")
      expect(notFound.name).toBe("NotFoundError")
      expect(relay.requestIds).toHaveLength(1)
      expect(notFound.requestId).toMatch(/^req_/)
      expect(notFound.requestId).toBe(relay.requestIds[0])
    } finally {
      await viaRelay.close()
      await relay.close()
    }
  })

  it("raises InvalidApiKeyError for an unknown key", async () => {
    const stranger = new Svc({ baseUrl: server.baseUrl, apiKey: "svc_not_a_real_key_0000000000" })
    try {
      const error = await stranger.knowledgebases.list().then(
        () => undefined,
        (e: unknown) => e
      )
      expect(error).toBeInstanceOf(InvalidApiKeyError)
      expect(error).toMatchObject({ status: 401, code: "invalid_api_key" })
    } finally {
      await stranger.close()
    }
  })

  it("replays a create sent twice with the same idempotency key", async () => {
    const idempotencyKey = `sdk-test-${Date.now()}`
    const first = await svc.knowledgebases.create({ name: "Once" }, { idempotencyKey })
    const second = await svc.knowledgebases.create({ name: "Once" }, { idempotencyKey })
    expect(second.knowledgebase.id).toBe(first.knowledgebase.id)
    const third = await svc.knowledgebases.create({ name: "Once" })
    expect(third.knowledgebase.id).not.toBe(first.knowledgebase.id)
  })

  it("reads SVC_BASE_URL and SVC_API_KEY when options are omitted", async () => {
    const saved = { base: process.env.SVC_BASE_URL, key: process.env.SVC_API_KEY }
    process.env.SVC_BASE_URL = server.baseUrl
    process.env.SVC_API_KEY = server.key
    const fromEnv = new Svc()
    try {
      expect((await fromEnv.agents.list()).agents).toEqual([])
    } finally {
      await fromEnv.close()
      for (const [name, value] of [["SVC_BASE_URL", saved.base], ["SVC_API_KEY", saved.key]] as const) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
    }
  })
})
