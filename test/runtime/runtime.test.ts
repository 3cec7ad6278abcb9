/**
 * ModelRuntime: which model answers (an Agent's name, the default, `builtin` without an endpoint),
 * the history budget applied to what reaches the provider, and ModelConfig read from the environment.
 */
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import {
  defaultModelSettings,
  effectiveDefaultModel,
  ModelConfig,
  ModelConfigError,
  type ModelSettings,
  modelSettingsFromEnv
} from "../../server/platform/model-config.js"
import type { TurnRequest } from "../../server/runtime/model.js"
import { ModelRuntime } from "../../server/runtime/service.js"
import { type FakeOpenAi, say, startFakeOpenAi } from "../support/fake-openai.js"

let fake: FakeOpenAi | undefined
afterEach(async () => {
  await fake?.close()
  fake = undefined
})

const withRuntime = <A, E>(settings: Partial<ModelSettings>, use: (runtime: ModelRuntime) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.flatMap(ModelRuntime, use).pipe(Effect.provide(ModelRuntime.Default.pipe(Layer.provide(ModelConfig.layer(settings))))))

const request = (overrides: Partial<TurnRequest> = {}): TurnRequest => ({ model: "", instructions: "", history: [], message: "Hello?", tools: [], ...overrides })

describe("resolving a model", () => {
  it("is builtin for every name when no endpoint is configured", async () => {
    const resolved = await withRuntime({ defaultModel: "llama3" }, (runtime) =>
      Effect.succeed([runtime.resolve("gpt-4o"), runtime.resolve(undefined), runtime.resolve("builtin")])
    )
    expect(resolved).toEqual([
      { model: "builtin", provider: "builtin" },
      { model: "builtin", provider: "builtin" },
      { model: "builtin", provider: "builtin" }
    ])
  })

  it("uses the Agent's model, else the default, on a configured endpoint; builtin stays builtin", async () => {
    const settings = { baseUrl: "http://127.0.0.1:9/v1", defaultModel: "llama3" }
    const resolved = await withRuntime(settings, (runtime) =>
      Effect.succeed([runtime.resolve("gpt-4o"), runtime.resolve(null), runtime.resolve("  "), runtime.resolve("builtin")])
    )
    expect(resolved).toEqual([
      { model: "gpt-4o", provider: "openai" },
      { model: "llama3", provider: "openai" },
      { model: "llama3", provider: "openai" },
      { model: "builtin", provider: "builtin" }
    ])
  })
})

describe("running a turn", () => {
  it("answers with builtin, calling no provider, when the model is builtin", async () => {
    fake = await startFakeOpenAi([say("from the provider")])
    const result = await withRuntime({ baseUrl: fake.baseUrl }, (runtime) => runtime.runTurn(request({ model: "builtin" })))
    expect(result.reply).toMatch(/^There is no Knowledgebase to search for "Hello\?"/)
    expect(fake.requests).toHaveLength(0)
  })

  it("sends the provider the model the name resolved to", async () => {
    fake = await startFakeOpenAi([say("a"), say("b")])
    const settings = { baseUrl: fake.baseUrl, defaultModel: "llama3" }
    await withRuntime(settings, (runtime) => Effect.all([runtime.runTurn(request({ model: "" })), runtime.runTurn(request({ model: "qwen" }))]))
    expect(fake.requests.map((r) => r.body.model)).toEqual(["llama3", "qwen"])
  })

  it("sends only the newest history that fits the token budget", async () => {
    fake = await startFakeOpenAi([say("ok")])
    const history = Array.from({ length: 10 }, (_, i) => ({ role: i % 2 === 0 ? ("user" as const) : ("assistant" as const), text: `turn ${i} `.padEnd(40, "x") }))
    // 40 characters are 10 tokens: the message (2) and three turns fit in 35, a fourth does not.
    await withRuntime({ baseUrl: fake.baseUrl, historyTokenBudget: 35 }, (runtime) => runtime.runTurn(request({ model: "m", message: "Hello?", history })))
    const sent = fake.requests[0]!.body.messages as Array<{ role: string; content: string }>
    expect(sent.map((m) => m.content.slice(0, 6))).toEqual(["turn 7", "turn 8", "turn 9", "Hello?"])
  })
})

describe("ModelConfig from the environment", () => {
  it("reads SVC_MODEL_BASE_URL, SVC_MODEL_API_KEY and SVC_MODEL", () => {
    expect(modelSettingsFromEnv({ SVC_MODEL_BASE_URL: "http://localhost:11434/v1/", SVC_MODEL_API_KEY: " k ", SVC_MODEL: "llama3" })).toEqual({
      ...defaultModelSettings,
      baseUrl: "http://localhost:11434/v1",
      apiKey: "k",
      defaultModel: "llama3"
    })
  })

  it("defaults to builtin with no endpoint, blank values counting as unset", () => {
    expect(modelSettingsFromEnv({ SVC_MODEL_BASE_URL: " ", SVC_MODEL: "" })).toEqual(defaultModelSettings)
    expect(defaultModelSettings.defaultModel).toBe("builtin")
    expect(defaultModelSettings.baseUrl).toBeUndefined()
  })

  it("takes the server's default model option (svc serve --model) over SVC_MODEL, blank counting as not given", () => {
    const env = { SVC_MODEL_BASE_URL: "http://localhost:11434/v1", SVC_MODEL: "llama3" }
    expect(modelSettingsFromEnv(env, "qwen").defaultModel).toBe("qwen")
    expect(modelSettingsFromEnv(env, " ").defaultModel).toBe("llama3")
    expect(modelSettingsFromEnv({}, "qwen").defaultModel).toBe("qwen")
  })

  it("reads the default as builtin when no endpoint is configured, as runs resolve it", () => {
    expect(effectiveDefaultModel({ baseUrl: undefined, defaultModel: "llama3" })).toBe("builtin")
    expect(effectiveDefaultModel({ baseUrl: "http://localhost:11434/v1", defaultModel: "llama3" })).toBe("llama3")
  })

  it("refuses a base URL that is not an http(s) URL", () => {
    expect(() => modelSettingsFromEnv({ SVC_MODEL_BASE_URL: "localhost:11434" })).toThrow(ModelConfigError)
    expect(() => modelSettingsFromEnv({ SVC_MODEL_BASE_URL: "not a url" })).toThrow("SVC_MODEL_BASE_URL is not a URL: not a url")
  })

  it("is read once into the layer", async () => {
    const env: Record<string, string | undefined> = { SVC_MODEL: "first" }
    const layer = ModelConfig.fromEnv(env)
    const read = await Effect.runPromise(
      Effect.gen(function* () {
        const settings = yield* ModelConfig
        env.SVC_MODEL = "second"
        return [settings.defaultModel, (yield* ModelConfig).defaultModel]
      }).pipe(Effect.provide(layer))
    )
    expect(read).toEqual(["first", "first"])
  })
})
