import { afterEach, describe, expect, it } from "vitest"
import {
  ApiClient,
  InvalidRequestError,
  RateLimitedError,
  ServerError,
  Svc,
  SvcConnectionError,
  SvcError,
  SvcTimeoutError
} from "../../sdk/index.js"
import { json, type LocalServer, startFakeApi } from "./local-http.js"

const kb = { id: "3f0a3a5e-8d4b-4b8e-9c59-2a8e0f7d1c11", name: "Handbook", description: "", createdAt: "", updatedAt: "", counts: { sources: 0, pages: 0 } }
const envelope = (code: string) => ({ error: { code, message: `fake ${code}` } })

const cleanup: Array<{ close: () => Promise<void> }> = []
afterEach(async () => {
  for (const item of cleanup.splice(0).reverse()) await item.close()
})

const setUp = async (respond: Parameters<typeof startFakeApi>[0], options: { maxRetries?: number; timeoutMs?: number } = {}) => {
  const fake = await startFakeApi(respond)
  const svc = new Svc({ baseUrl: fake.baseUrl, apiKey: "svc_test", ...options })
  cleanup.push(fake as LocalServer, svc)
  return { fake, svc }
}

describe("retries", () => {
  it("waits Retry-After on 429 and resends the same Idempotency-Key", async () => {
    const { fake, svc } = await setUp((_, index, res) =>
      index === 0 ? json(res, 429, envelope("rate_limited"), { "retry-after": "1" }) : json(res, 201, { knowledgebase: kb })
    )
    const created = await svc.knowledgebases.create({ name: "Handbook" })
    expect(created.knowledgebase.id).toBe(kb.id)
    expect(fake.received).toHaveLength(2)
    const [first, second] = fake.received
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1000)
    const key = first!.headers["idempotency-key"]
    expect(key).toMatch(/^[0-9a-f-]{36}$/)
    expect(second!.headers["idempotency-key"]).toBe(key)
    expect(JSON.parse(second!.body)).toEqual({ name: "Handbook" })
    expect(first!.headers.authorization).toBe("Bearer svc_test")
  })

  it("uses the caller's idempotency key and sends none where the operation takes none", async () => {
    const { fake, svc } = await setUp((req, _, res) =>
      req.method === "POST" ? json(res, 201, { knowledgebase: kb }) : json(res, 200, { agents: [], nextCursor: null })
    )
    await svc.knowledgebases.create({ name: "Handbook" }, { idempotencyKey: "mine-1" })
    await svc.agents.list()
    expect(fake.received.map((r) => r.headers["idempotency-key"])).toEqual(["mine-1", undefined])
  })

  it("retries a 500", async () => {
    const { fake, svc } = await setUp((_, index, res) =>
      index === 0 ? json(res, 500, envelope("server_error")) : json(res, 200, { agents: [], nextCursor: null })
    )
    expect(await svc.agents.list()).toEqual({ agents: [], nextCursor: null })
    expect(fake.received).toHaveLength(2)
  })

  it("does not retry a 400", async () => {
    const { fake, svc } = await setUp((_, __, res) => json(res, 400, envelope("invalid_request")))
    const error = await svc.agents.list({ limit: 500 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidRequestError)
    expect(error).toMatchObject({ status: 400, code: "invalid_request", message: "fake invalid_request", requestId: "req_fake_400" })
    expect(fake.received).toHaveLength(1)
    expect(fake.received[0]!.url).toBe("/api/v1/agents?limit=500")
  })

  it("never exceeds maxRetries", async () => {
    const { fake, svc } = await setUp((_, __, res) => json(res, 500, envelope("server_error")), { maxRetries: 1 })
    await expect(svc.agents.list()).rejects.toBeInstanceOf(ServerError)
    expect(fake.received).toHaveLength(2)

    const none = new Svc({ baseUrl: fake.baseUrl, apiKey: "svc_test", maxRetries: 0 })
    cleanup.push(none)
    await expect(none.agents.list()).rejects.toBeInstanceOf(ServerError)
    expect(fake.received).toHaveLength(3)
  })

  it("gives up on 429 after maxRetries with RateLimitedError", async () => {
    const { fake, svc } = await setUp((_, __, res) => json(res, 429, envelope("rate_limited"), { "retry-after": "0" }), { maxRetries: 2 })
    const error = await svc.agents.list().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RateLimitedError)
    expect((error as SvcError).headers["retry-after"]).toBe("0")
    expect(fake.received).toHaveLength(3)
  })

  it("maps unknown codes and bodies without an envelope to SvcError", async () => {
    const { svc } = await setUp((_, index, res) =>
      index === 0 ? json(res, 418, envelope("teapot")) : (res.writeHead(404), res.end("nope"))
    )
    const unknown = await svc.agents.list().catch((e: unknown) => e)
    expect(unknown).toBeInstanceOf(SvcError)
    expect((unknown as SvcError).constructor).toBe(SvcError)
    expect(unknown).toMatchObject({ status: 418, code: "teapot" })
    await expect(svc.agents.list()).rejects.toMatchObject({ status: 404, code: "http_404" })
  })
})

describe("connection failures", () => {
  it("retries a GET after a dropped connection", async () => {
    const { fake, svc } = await setUp((_, index, res) =>
      index === 0 ? res.socket?.destroy() : json(res, 200, { agents: [], nextCursor: null })
    )
    expect((await svc.agents.list()).agents).toEqual([])
    expect(fake.received).toHaveLength(2)
  })

  it("does not resend a write without an Idempotency-Key after a dropped connection", async () => {
    const fake = await startFakeApi((_, __, res) => res.socket?.destroy())
    const client = new ApiClient({ baseUrl: fake.baseUrl, apiKey: "svc_test" })
    cleanup.push(fake, client)
    await expect(client.request({ method: "POST", path: "/agents/{id}/conversation", pathParams: { id: "a b" }, body: { message: "hi" } }))
      .rejects.toBeInstanceOf(SvcConnectionError)
    expect(fake.received.map((r) => r.url)).toEqual(["/api/v1/agents/a%20b/conversation"])
  })

  it("raises SvcConnectionError when nothing listens", async () => {
    const fake = await startFakeApi(() => undefined)
    await fake.close()
    const svc = new Svc({ baseUrl: fake.baseUrl, apiKey: "svc_test", maxRetries: 1 })
    cleanup.push(svc)
    const error = await svc.agents.list().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SvcConnectionError)
    expect(error).toMatchObject({ status: 0, code: "connection_error" })
  })

  it("times out an attempt after timeoutMs", async () => {
    const { fake, svc } = await setUp(() => undefined, { timeoutMs: 150, maxRetries: 0 })
    const error = await svc.agents.list().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SvcTimeoutError)
    expect(error).toBeInstanceOf(SvcConnectionError)
    expect(fake.received).toHaveLength(1)
  })

  it("stops at once when the caller aborts", async () => {
    const { svc } = await setUp(() => undefined)
    const controller = new AbortController()
    const pending = svc.agents.list(undefined, { signal: controller.signal }).then(
      () => "resolved",
      (e: unknown) => e
    )
    setTimeout(() => controller.abort(new Error("stop")), 50)
    expect(await pending).toMatchObject({ message: "stop" })
  })
})
