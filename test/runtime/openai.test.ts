/**
 * The OpenAI-compatible model through the `openai` client against a fake provider on a real
 * socket (test/support/fake-openai.ts): streamed deltas, the tool loop and its bounds, retries of
 * 429 and 5xx, time limits, and interruption closing the provider's connection.
 */
import { Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { RunFailed } from "../../server/platform/errors.js"
import { ModelConfig, type ModelSettings } from "../../server/platform/model-config.js"
import { deliverWhole, type ModelTool, type TurnEvent, type TurnRequest, type TurnResult } from "../../server/runtime/model.js"
import { ModelRuntime } from "../../server/runtime/service.js"
import { callTool, type FakeOpenAi, type FakeScript, say, startFakeOpenAi } from "../support/fake-openai.js"

const apiKey = "sk-test-SECRET-0123456789"
let fake: FakeOpenAi | undefined

afterEach(async () => {
  await fake?.close()
  fake = undefined
})

const start = async (script: FakeScript) => {
  fake = await startFakeOpenAi(script)
  return fake
}

const settingsFor = (server: FakeOpenAi, overrides: Partial<ModelSettings> = {}): Partial<ModelSettings> => ({
  baseUrl: server.baseUrl,
  apiKey,
  backoffMs: 10,
  ...overrides
})

const request = (overrides: Partial<TurnRequest> = {}): TurnRequest => ({
  model: "fake-model",
  instructions: "You answer briefly.",
  history: [],
  message: "Hello?",
  tools: [],
  ...overrides
})

interface Timed {
  readonly event: TurnEvent
  readonly at: number
}

/** Runs one turn on a runtime built with `settings`, recording each event with its arrival time. */
const turn = (settings: Partial<ModelSettings>, req: TurnRequest, events: Array<Timed> = []) =>
  Effect.flatMap(ModelRuntime, (runtime) => runtime.runTurn(req, (event) => Effect.sync(() => void events.push({ event, at: Date.now() })))).pipe(
    Effect.provide(ModelRuntime.Default.pipe(Layer.provide(ModelConfig.layer(settings))))
  )

const runTurn = (settings: Partial<ModelSettings>, req: TurnRequest, events: Array<Timed> = []): Promise<Exit.Exit<TurnResult, RunFailed>> =>
  Effect.runPromiseExit(turn(settings, req, events))

const failureOf = (exit: Exit.Exit<TurnResult, RunFailed>): RunFailed => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error(`expected a RunFailed, got ${JSON.stringify(exit)}`)
  return exit.cause.error
}
const resultOf = (exit: Exit.Exit<TurnResult, RunFailed>): TurnResult => {
  if (Exit.isFailure(exit)) throw new Error(`expected success, got ${JSON.stringify(exit.cause)}`)
  return exit.value
}
const deltas = (events: ReadonlyArray<Timed>) => events.flatMap(({ event }) => (event.type === "delta" ? [event.text] : []))

/** A tool recording the arguments it ran with. */
const weatherTool = (ran: Array<unknown>, answer = "sunny, 21 °C"): ModelTool => ({
  name: "weather",
  description: "Today's weather in a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  run: (args) => Effect.sync(() => (ran.push(args), answer))
})

describe("streamed completions", () => {
  it("reads a stream whose provider labels it as something other than event-stream", async () => {
    const server = await start([{ headers: { "content-type": "text/plain" }, parts: [{ kind: "text", text: "plain " }, { kind: "text", text: "label" }] }])
    const events: Array<Timed> = []
    const exit = await runTurn(settingsFor(server), request(), events)
    expect(resultOf(exit).reply).toBe("plain label")
    expect(deltas(events)).toEqual(["plain ", "label"])
  })

  it("forwards deltas in order as they arrive and sends instructions, history and the message", async () => {
    const server = await start([
      { parts: [{ kind: "text", text: "Hel" }, { kind: "wait", ms: 300 }, { kind: "text", text: "lo" }, { kind: "wait", ms: 300 }, { kind: "text", text: " world" }] }
    ])
    const events: Array<Timed> = []
    const history = [
      { role: "user", text: "Hi" },
      { role: "assistant", text: "Hello, how can I help?" }
    ] as const
    const exit = await runTurn(settingsFor(server), request({ history }), events)
    expect(resultOf(exit).reply).toBe("Hello world")
    expect(deltas(events)).toEqual(["Hel", "lo", " world"])
    const times = events.filter(({ event }) => event.type === "delta").map(({ at }) => at)
    expect(times[2]! - times[0]!).toBeGreaterThanOrEqual(450)
    const [seen] = server.requests
    expect(seen!.headers.authorization).toBe(`Bearer ${apiKey}`)
    expect(seen!.body).toMatchObject({ model: "fake-model", stream: true })
    expect(seen!.body.tools).toBeUndefined()
    expect(seen!.body.messages).toEqual([
      { role: "system", content: "You answer briefly." },
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello, how can I help?" },
      { role: "user", content: "Hello?" }
    ])
    expect(resultOf(exit).steps.map((s) => [s.type, s.name])).toEqual([["model", "fake-model"]])
  })

  it("sends no Authorization header and no system message when there is no key and no instructions", async () => {
    const server = await start([say("ok")])
    const exit = await runTurn({ ...settingsFor(server), apiKey: undefined }, request({ instructions: " " }))
    expect(resultOf(exit).reply).toBe("ok")
    expect(server.requests[0]!.headers.authorization).toBeUndefined()
    expect(server.requests[0]!.body.messages).toEqual([{ role: "user", content: "Hello?" }])
  })
})

describe("answers cut short", () => {
  it("fails the run, after forwarding what arrived, when the stream ends without a finish reason", async () => {
    const server = await start([{ parts: [{ kind: "text", text: "Half an" }, { kind: "end" }] }, say("never asked")])
    const events: Array<Timed> = []
    const failure = failureOf(await runTurn(settingsFor(server), request(), events))
    expect(failure.message).toBe("The model provider broke off its answer (the stream ended before a finish reason).")
    expect(deltas(events)).toEqual(["Half an"])
    expect(server.requests).toHaveLength(1)
  })

  it("fails the run, without retrying, when the connection drops mid-stream", async () => {
    const server = await start([{ parts: [{ kind: "text", text: "Half an" }, { kind: "wait", ms: 50 }, { kind: "drop" }] }, say("never asked")])
    const events: Array<Timed> = []
    const failure = failureOf(await runTurn(settingsFor(server), request(), events))
    expect(failure.message).toMatch(/^The model provider broke off its answer \(.+\)\.$/)
    expect(deltas(events)).toEqual(["Half an"])
    expect(server.requests).toHaveLength(1)
  })
})

describe("tool calls", () => {
  it("runs the tool with the parsed arguments, sends its result back and returns the final answer", async () => {
    const server = await start([callTool("weather", { city: "Paris" }, "call_1"), say("It is sunny ", "in Paris.")])
    const ran: Array<unknown> = []
    const events: Array<Timed> = []
    const result = resultOf(await runTurn(settingsFor(server), request({ tools: [weatherTool(ran)] }), events))
    expect(ran).toEqual([{ city: "Paris" }])
    expect(result.reply).toBe("It is sunny in Paris.")
    expect(result.toolsCalled).toEqual([{ name: "weather", arguments: { city: "Paris" } }])
    expect(result.steps.map((s) => [s.type, s.name])).toEqual([
      ["model", "fake-model"],
      ["tool", "weather"],
      ["model", "fake-model"]
    ])
    const kinds = events.map(({ event }) => event.type)
    expect(kinds.indexOf("tool")).toBeLessThan(kinds.indexOf("delta"))
    const [first, second] = server.requests
    expect(first!.body.tools).toEqual([
      {
        type: "function",
        function: { name: "weather", description: "Today's weather in a city.", parameters: weatherTool([]).parameters }
      }
    ])
    expect(second!.body.messages.slice(-2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } }]
      },
      { role: "tool", tool_call_id: "call_1", content: "sunny, 21 °C" }
    ])
  })

  it("gathers parallel tool calls by index, whatever order their pieces come in, and runs them in index order", async () => {
    const server = await start([
      {
        parts: [
          { kind: "tool", index: 1, id: "call_b", name: "weather", arguments: '{"city":' },
          { kind: "tool", index: 0, id: "call_a", name: "weather", arguments: '{"city":"Oslo"}' },
          { kind: "tool", index: 1, id: "call_b", name: "weather", arguments: '"Rome"}' }
        ]
      },
      say("Both.")
    ])
    const ran: Array<unknown> = []
    const result = resultOf(await runTurn(settingsFor(server), request({ tools: [weatherTool(ran)] })))
    expect(ran).toEqual([{ city: "Oslo" }, { city: "Rome" }])
    expect(result.toolsCalled.map((call) => call.arguments)).toEqual([{ city: "Oslo" }, { city: "Rome" }])
    expect(server.requests[1]!.body.messages.slice(-2)).toEqual([
      { role: "tool", tool_call_id: "call_a", content: "sunny, 21 °C" },
      { role: "tool", tool_call_id: "call_b", content: "sunny, 21 °C" }
    ])
  })

  it("does not run a tool on arguments its schema refuses, and tells the model what was wrong", async () => {
    const server = await start([callTool("weather", { town: "Paris" }), callTool("nowhere", {}), say("Sorry.")])
    const ran: Array<unknown> = []
    const result = resultOf(await runTurn(settingsFor(server), request({ tools: [weatherTool(ran)] })))
    expect(ran).toEqual([])
    expect(result.toolsCalled).toEqual([])
    const answers = server.requests.slice(1).map((r) => r.body.messages.at(-1))
    expect(answers[0]).toMatchObject({ role: "tool", content: expect.stringMatching(/^Error: invalid arguments for weather: .*city/) })
    expect(answers[1]).toMatchObject({ role: "tool", content: 'Error: there is no tool named "nowhere".' })
  })

  it("fails the run when the model is still calling tools after the most steps a turn may take", async () => {
    const server = await start(() => callTool("weather", { city: "Paris" }))
    const ran: Array<unknown> = []
    const exit = await runTurn(settingsFor(server, { maxSteps: 3 }), request({ tools: [weatherTool(ran)] }))
    expect(failureOf(exit).message).toBe("The model was still calling tools after 3 steps, the most one turn may take.")
    expect(server.requests).toHaveLength(3)
    expect(ran).toHaveLength(2)
  })

  it("fails the run when a tool fails", async () => {
    const server = await start([callTool("weather", { city: "Paris" }), say("never")])
    const failing: ModelTool = { ...weatherTool([]), run: () => Effect.fail(new RunFailed({ message: "weather service down" })) }
    const exit = await runTurn(settingsFor(server), request({ tools: [failing] }))
    expect(failureOf(exit).message).toBe("weather service down")
    expect(server.requests).toHaveLength(1)
  })
})

describe("retries", () => {
  it("retries a 429, waiting what Retry-After asks, then succeeds", async () => {
    const server = await start([{ status: 429, headers: { "retry-after": "0.3" }, error: "slow down" }, say("ok")])
    const exit = await runTurn(settingsFor(server), request())
    expect(resultOf(exit).reply).toBe("ok")
    expect(server.requests).toHaveLength(2)
    expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(280)
  })

  it("fails after the last attempt of a 5xx, with a message that never holds the key", async () => {
    const server = await start((seen) => ({ status: 503, error: `overloaded; you sent ${String(seen.headers.authorization)} and ${apiKey}` }))
    const exit = await runTurn(settingsFor(server, { maxAttempts: 3 }), request())
    const failure = failureOf(exit)
    expect(server.requests).toHaveLength(3)
    expect(failure.message).toMatch(/^The model provider answered 503 \(.*overloaded.*\) on 3 attempts\.$/)
    expect(failure.message).not.toContain(apiKey)
    expect(failure.message).not.toContain("SECRET")
  })

  it("backs off, doubling the wait, between attempts", async () => {
    const server = await start(() => ({ status: 500 }))
    await runTurn(settingsFor(server, { maxAttempts: 3, backoffMs: 150 }), request())
    const [a, b, c] = server.requests.map((r) => r.at)
    expect(b! - a!).toBeGreaterThanOrEqual(140)
    expect(c! - b!).toBeGreaterThanOrEqual(290)
  })

  it("does not retry a refusal that is not 429 or 5xx", async () => {
    const server = await start(() => ({ status: 400, error: "unknown model" }))
    const failure = failureOf(await runTurn(settingsFor(server), request()))
    expect(server.requests).toHaveLength(1)
    expect(failure.message).toBe("The model provider answered 400 (unknown model).")
  })

  it("fails at once when the provider asks to wait longer than the runtime honours", async () => {
    const server = await start(() => ({ status: 429, headers: { "retry-after": "120" } }))
    const failure = failureOf(await runTurn(settingsFor(server, { maxRetryAfterMs: 5_000 }), request()))
    expect(server.requests).toHaveLength(1)
    expect(failure.message).toMatch(/asked to wait 120 seconds\.$/)
  })

  it("retries a provider that cannot be reached, then fails", async () => {
    const server = await start([])
    const baseUrl = server.baseUrl
    await server.close()
    fake = undefined
    const failure = failureOf(await runTurn({ baseUrl, apiKey, backoffMs: 10, maxAttempts: 2 }, request()))
    expect(failure.message).toBe("The model provider could not be reached on 2 attempts.")
  })
})

describe("time limits and interruption", () => {
  it("waits for a slow first token within the budget and still streams what follows", async () => {
    const server = await start([{ parts: [{ kind: "wait", ms: 700 }, { kind: "text", text: "late" }, { kind: "wait", ms: 200 }, { kind: "text", text: " but here" }] }])
    const events: Array<Timed> = []
    const started = Date.now()
    const exit = await runTurn(settingsFor(server, { timeBudgetMs: 5_000 }), request(), events)
    expect(resultOf(exit).reply).toBe("late but here")
    expect(deltas(events)).toEqual(["late", " but here"])
    expect(events[0]!.at - started).toBeGreaterThanOrEqual(650)
  })

  it("fails the run when the turn is over its time budget, closing the provider's connection", async () => {
    const server = await start([{ parts: [{ kind: "wait", ms: 5_000 }, { kind: "text", text: "too late" }] }])
    const aborted = server.nextAbort()
    const started = Date.now()
    const failure = failureOf(await runTurn(settingsFor(server, { timeBudgetMs: 400 }), request()))
    expect(failure.message).toBe("The model did not finish within 400 ms, the most one turn may take.")
    expect(Date.now() - started).toBeLessThan(1_500)
    await expect(aborted).resolves.toBe(0)
  })

  it("counts a tool's run against the turn's time budget", async () => {
    const server = await start([callTool("weather", { city: "Oslo" }), say("never asked")])
    const slowTool: ModelTool = { ...weatherTool([]), run: () => Effect.as(Effect.sleep("5 seconds"), "sunny") }
    const started = Date.now()
    const failure = failureOf(await runTurn(settingsFor(server, { timeBudgetMs: 400 }), request({ tools: [slowTool] })))
    expect(failure.message).toBe("The model did not finish within 400 ms, the most one turn may take.")
    expect(Date.now() - started).toBeLessThan(1_500)
    expect(server.requests).toHaveLength(1)
  })

  it("fails at once, over budget, rather than wait for a retry the budget cannot hold", async () => {
    const server = await start([{ status: 503, error: "busy" }, say("too late")])
    const started = Date.now()
    const failure = failureOf(await runTurn(settingsFor(server, { timeBudgetMs: 2_000, backoffMs: 5_000 }), request()))
    expect(failure.message).toBe("The model did not finish within 2 seconds, the most one turn may take.")
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(server.requests).toHaveLength(1)
  })

  it("retries a provider that sends no headers within the request timeout", async () => {
    const server = await start([{ headersDelayMs: 2_000, parts: [{ kind: "text", text: "slow" }] }, say("fast")])
    const exit = await runTurn(settingsFor(server, { requestTimeoutMs: 300 }), request())
    expect(resultOf(exit).reply).toBe("fast")
    expect(server.requests).toHaveLength(2)
  })

  it("waits for a whole answer past the request timeout, within the budget (its headers come with the answer)", async () => {
    const server = await start([{ headersDelayMs: 600, parts: [{ kind: "text", text: "slow but " }, { kind: "text", text: "whole" }] }])
    const events: Array<Timed> = []
    const exit = await Effect.runPromiseExit(deliverWhole(turn(settingsFor(server, { requestTimeoutMs: 300 }), request(), events)))
    expect(resultOf(exit).reply).toBe("slow but whole")
    expect(deltas(events)).toEqual(["slow but whole"])
    expect(server.requests.map((seen) => seen.body.stream)).toEqual([false])
  })

  it("fails a whole answer over the budget, closing the provider's connection", async () => {
    const server = await start([{ headersDelayMs: 5_000, parts: [{ kind: "text", text: "too late" }] }])
    const aborted = server.nextAbort()
    const failure = failureOf(await Effect.runPromiseExit(deliverWhole(turn(settingsFor(server, { timeBudgetMs: 400 }), request()))))
    expect(failure.message).toBe("The model did not finish within 400 ms, the most one turn may take.")
    await expect(aborted).resolves.toBe(0)
  })

  it("aborts the model call when the turn is interrupted mid-stream", async () => {
    const server = await start([{ parts: [{ kind: "text", text: "partial" }, { kind: "hang" }] }])
    const aborted = server.nextAbort()
    const events: Array<TurnEvent> = []
    const program = Effect.gen(function* () {
      const firstDelta = yield* Deferred.make<void>()
      const sink = (event: TurnEvent) =>
        Effect.sync(() => void events.push(event)).pipe(Effect.zipRight(event.type === "delta" ? Deferred.succeed(firstDelta, undefined) : Effect.void))
      const fiber = yield* Effect.fork(Effect.flatMap(ModelRuntime, (runtime) => runtime.runTurn(request(), sink)))
      yield* Deferred.await(firstDelta)
      const started = Date.now()
      const exit = yield* Fiber.interrupt(fiber)
      return { exit, took: Date.now() - started }
    }).pipe(Effect.provide(ModelRuntime.Default.pipe(Layer.provide(ModelConfig.layer(settingsFor(server))))))
    const { exit, took } = await Effect.runPromise(program)
    expect(Exit.isInterrupted(exit)).toBe(true)
    expect(took).toBeLessThan(500)
    await expect(aborted).resolves.toBe(0)
    expect(events.map((event) => event.type)).toEqual(["delta", "step"])
  })
})
