/**
 * The embedding settings read from the environment (which endpoint, which key, when search stays
 * lexical) and the embedding client against the local fake endpoint on a real socket: batches,
 * retries of 429/5xx, no retry of a 400, an unreachable endpoint, and an answer without vectors.
 */
import { Effect, Exit } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EmbeddingFailed, makeEmbeddingClient } from "../../server/knowledge/embeddings/client.js"
import { defaultEmbeddingSettings, embeddingSettingsFromEnv, isHybrid } from "../../server/knowledge/embeddings/config.js"
import { unitVector } from "../../server/knowledge/embeddings/vector.js"
import { ModelConfigError } from "../../server/platform/model-config.js"
import { fakeVector, type FakeEmbeddings, startFakeEmbeddings } from "../support/fake-embeddings.js"

describe("embeddingSettingsFromEnv", () => {
  it("is lexical with nothing set, and with a model but no endpoint", () => {
    expect(isHybrid(embeddingSettingsFromEnv({}))).toBe(false)
    expect(embeddingSettingsFromEnv({ SVC_EMBEDDING_MODEL: "nomic-embed-text" })).toMatchObject({ model: null, baseUrl: undefined })
  })

  it("uses its own endpoint and key when SVC_EMBEDDING_BASE_URL is set, never the chat key", () => {
    const settings = embeddingSettingsFromEnv({
      SVC_EMBEDDING_MODEL: " text-embedding-3-small ",
      SVC_EMBEDDING_BASE_URL: "https://embed.example/v1/",
      SVC_MODEL_BASE_URL: "http://localhost:11434/v1",
      SVC_MODEL_API_KEY: "chat-key"
    })
    expect(settings).toMatchObject({ model: "text-embedding-3-small", baseUrl: "https://embed.example/v1", apiKey: undefined })
    expect(isHybrid(settings)).toBe(true)
  })

  it("falls back to the chat endpoint and its key when SVC_EMBEDDING_BASE_URL is unset; its own key wins", () => {
    const env = { SVC_EMBEDDING_MODEL: "nomic-embed-text", SVC_MODEL_BASE_URL: "http://localhost:11434/v1", SVC_MODEL_API_KEY: "chat-key" }
    expect(embeddingSettingsFromEnv(env)).toMatchObject({ model: "nomic-embed-text", baseUrl: "http://localhost:11434/v1", apiKey: "chat-key" })
    expect(embeddingSettingsFromEnv({ ...env, SVC_EMBEDDING_API_KEY: "embed-key" }).apiKey).toBe("embed-key")
  })

  it("takes --embedding-model over SVC_EMBEDDING_MODEL, blank counting as not given", () => {
    const env = { SVC_EMBEDDING_MODEL: "from-env", SVC_EMBEDDING_BASE_URL: "http://127.0.0.1:1/v1" }
    expect(embeddingSettingsFromEnv(env, "from-option").model).toBe("from-option")
    expect(embeddingSettingsFromEnv(env, "  ").model).toBe("from-env")
  })

  it("refuses a base URL that is not an http(s) URL", () => {
    expect(() => embeddingSettingsFromEnv({ SVC_EMBEDDING_BASE_URL: "not a url" })).toThrow(ModelConfigError)
    expect(() => embeddingSettingsFromEnv({ SVC_EMBEDDING_BASE_URL: "ftp://host/v1" })).toThrow("SVC_EMBEDDING_BASE_URL must be an http or https URL")
    expect(() => embeddingSettingsFromEnv({ SVC_MODEL_BASE_URL: "file:///tmp" })).toThrow("SVC_MODEL_BASE_URL must be an http or https URL")
  })
})

describe("the embedding client", () => {
  let fake: FakeEmbeddings
  beforeAll(async () => {
    fake = await startFakeEmbeddings()
  })
  afterAll(async () => {
    await fake.close()
  })
  const client = (overrides: Partial<typeof defaultEmbeddingSettings> = {}) =>
    makeEmbeddingClient({ ...defaultEmbeddingSettings, model: "fake-embed", baseUrl: fake.baseUrl, backoffMs: 5, ...overrides } as any)

  it("sends batches of batchSize, without an Authorization header when there is no key, and answers unit vectors in order", async () => {
    const before = fake.requests.length
    const texts = Array.from({ length: 150 }, (_, i) => `text number ${i} about topic ${i % 7}`)
    const vectors = await Effect.runPromise(client().embed(texts))
    expect(fake.requests.slice(before).map((request) => request.input.length)).toEqual([64, 64, 22])
    expect(fake.requests.slice(before).every((request) => request.headers.authorization === undefined)).toBe(true)
    expect(vectors.map((vector) => [...vector])).toEqual(texts.map((text) => [...unitVector(fakeVector(text))]))
  })

  it("retries 429 and 503 and stops after maxAttempts with a message saying so", async () => {
    const before = fake.requests.length
    fake.failNext(1, 429)
    fake.failNext(1, 503)
    expect((await Effect.runPromise(client().embed(["hello"]))).length).toBe(1)
    expect(fake.requests.slice(before).map((request) => request.status)).toEqual([429, 503, 200])

    fake.failNext(3, 502)
    const exit = await Effect.runPromiseExit(client({ maxAttempts: 3 }).embed(["hello"]))
    expect(exit).toEqual(Exit.fail(expect.any(EmbeddingFailed)))
    if (Exit.isFailure(exit) && exit.cause._tag === "Fail") expect(exit.cause.error.message).toMatch(/^The embedding endpoint answered 502 .*\(3 attempts\)\.$/)
  })

  it("does not retry a 400", async () => {
    const before = fake.requests.length
    fake.failNext(1, 400)
    const exit = await Effect.runPromiseExit(client().embed(["bad"]))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(fake.requests.length - before).toBe(1)
  })

  it("fails with could not be reached when nothing listens", async () => {
    const exit = await Effect.runPromiseExit(
      makeEmbeddingClient({ ...defaultEmbeddingSettings, model: "m", baseUrl: "http://127.0.0.1:9/v1", maxAttempts: 2, backoffMs: 1 }).embed(["x"])
    )
    expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error.message).toBe("The embedding endpoint could not be reached (2 attempts).")
  })

  it("fails without retrying when the answer holds no vector for an input", async () => {
    let calls = 0
    const broken = createServer((_req, res) => {
      calls++
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ object: "list", data: [{ object: "embedding", index: 0, embedding: [1, 0] }], model: "m" }))
    })
    await new Promise<void>((resolve) => broken.listen(0, "127.0.0.1", resolve))
    try {
      const baseUrl = `http://127.0.0.1:${(broken.address() as AddressInfo).port}/v1`
      const exit = await Effect.runPromiseExit(makeEmbeddingClient({ ...defaultEmbeddingSettings, model: "m", baseUrl }).embed(["one", "two"]))
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error.message).toBe(
        "The embedding endpoint answered no usable vector for input 2 of 2."
      )
      expect(calls).toBe(1)
    } finally {
      await new Promise<void>((resolve) => broken.close(() => resolve()))
    }
  })
})
