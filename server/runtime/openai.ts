/**
 * Models behind an OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp, LM Studio), through
 * the `openai` client: streamed chat completions (or whole ones when the run returns its reply
 * whole, `ReplyDelivery`), text forwarded as it arrives, tool calls gathered
 * from the stream, run through the tools' `run` and answered, in a loop bounded by `maxSteps` model
 * calls and `timeBudgetMs`. Tools the model asks for on its last allowed step are not run: the turn
 * fails instead. The client's own retries are off: 429, 5xx, refused connections and requests
 * unanswered in `requestTimeoutMs` are tried `maxAttempts` times, waiting `backoffMs` doubled each
 * time, or what `Retry-After` asks up to `maxRetryAfterMs`. A request is only retried before its
 * stream started (text already forwarded is never sent twice); a stream that ends without a finish
 * reason is an answer cut short and fails the run. The time budget is a deadline: a timer aborts
 * the model call in flight when it passes, a retry that would wait past it is not made, and a
 * tool's run is limited to what is left. Interrupting the turn aborts the request in flight.
 * Each model call and tool call is a span of the execution's trace (`trace.ts`): the messages sent,
 * the tokens the provider counted (`usage`, asked of streams with `stream_options.include_usage`),
 * the reply and the calls asked for; a tool's arguments and result.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { Clock, Duration, Effect, Exit, FiberRef } from "effect"
import type OpenAI from "openai"
import { RunFailed } from "../platform/errors.js"
import type { ModelSettings } from "../platform/model-config.js"
import {
  type JsonSchemaObject,
  type ModelImplementation,
  type ModelTool,
  ReplyDelivery,
  type ToolCall,
  type TurnRequest,
  type TurnResult,
  type TurnSink,
  type TurnStep,
  timedStep
} from "./model.js"
import { makeOpenAiClient } from "../platform/model-fetch.js"
import { traced, tracedMessages, tracedText } from "./trace.js"
import { classifyProviderError, describeStreamError } from "../platform/provider-errors.js"

type Message = OpenAI.Chat.ChatCompletionMessageParam
type ChunkStream = AsyncIterable<OpenAI.Chat.ChatCompletionChunk>

/** A tool call as the stream spelled it. */
interface StreamedCall {
  readonly id: string
  readonly name: string
  readonly arguments: string
}

/** One model call in flight: its abort signal, the turn's deadline and whether it passed. */
interface ModelCall {
  readonly signal: AbortSignal
  /** Epoch milliseconds by which the turn must be over. */
  readonly deadline: number
  readonly overBudget: () => boolean
}

/** What one model call answered, and the tokens the provider counted (null when it reported none). */
interface ModelAnswer {
  readonly text: string
  readonly calls: ReadonlyArray<StreamedCall>
  readonly usage: TokenUsage | null
}

/** Tokens a provider counted for one call. */
interface TokenUsage {
  readonly input: number
  readonly output: number
}

/** The tokens of a completion or of a stream's last chunk (`stream_options.include_usage`), if reported. */
const usageOf = (usage: OpenAI.Completions.CompletionUsage | null | undefined): TokenUsage | null =>
  usage === null || usage === undefined ? null : { input: usage.prompt_tokens, output: usage.completion_tokens }

/** A tool call's arguments as a trace shows them: parsed when they are JSON, else as sent. */
const argumentsForTrace = (text: string): unknown => {
  try {
    return text.trim() === "" ? {} : JSON.parse(text)
  } catch {
    return text
  }
}

/** A message sent, as a trace shows it. */
const tracedMessage = (message: Message) => ({
  role: message.role === "developer" || message.role === "function" ? ("system" as const) : message.role,
  text: typeof message.content === "string" ? message.content : message.content === null || message.content === undefined ? "" : JSON.stringify(message.content)
})

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020
const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }))
const validators = new WeakMap<JsonSchemaObject, ValidateFunction>()

/** The validator of a tool's parameters, compiled once per schema object. */
const validatorOf = (schema: JsonSchemaObject): ValidateFunction => {
  let validate = validators.get(schema)
  if (validate === undefined) {
    validate = ajv.compile(schema)
    validators.set(schema, validate)
  }
  return validate
}

/** "500 ms", "1 second", "120 seconds". */
const seconds = (ms: number) => {
  if (ms < 1000) return `${Math.round(ms)} ms`
  const n = Math.max(1, Math.round(ms / 1000))
  return `${n} ${n === 1 ? "second" : "seconds"}`
}

/** The model implementation behind `settings.baseUrl`. */
export const makeOpenAiImplementation = (settings: ModelSettings & { readonly baseUrl: string }): ModelImplementation => {
  const apiKey = settings.apiKey
  const client = makeOpenAiClient({ baseUrl: settings.baseUrl, apiKey, timeoutMs: settings.requestTimeoutMs })

  const providerFailed = (description: string) => new RunFailed({ message: `The model provider ${description}.` })
  const overBudget = () => new RunFailed({ message: `The model did not finish within ${seconds(settings.timeBudgetMs)}, the most one turn may take.` })

  /** Sends a completion request (`send`), retrying what the policy retries while the turn's deadline allows. */
  const open = <A>(send: () => Promise<A>, call: ModelCall): Effect.Effect<A, RunFailed> => {
    const attempt = (n: number): Effect.Effect<A, RunFailed> =>
      Effect.tryPromise({ try: send, catch: (error) => error }).pipe(
        Effect.catchAll((error) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            if (call.overBudget()) return Effect.fail(overBudget())
            const failure = classifyProviderError(error, apiKey, now)
            if (!failure.retryable) return Effect.fail(providerFailed(failure.description))
            if (n >= settings.maxAttempts) {
              return Effect.fail(providerFailed(`${failure.description} on ${n} ${n === 1 ? "attempt" : "attempts"}`))
            }
            if (failure.retryAfterMs !== undefined && failure.retryAfterMs > settings.maxRetryAfterMs) {
              return Effect.fail(providerFailed(`${failure.description} and asked to wait ${seconds(failure.retryAfterMs)}`))
            }
            const wait = failure.retryAfterMs ?? settings.backoffMs * 2 ** (n - 1)
            if (now + wait >= call.deadline) return Effect.fail(overBudget())
            return Effect.zipRight(Effect.sleep(Duration.millis(wait)), attempt(n + 1))
          })
        )
      )
    return attempt(1)
  }

  /** A whole (non-streamed) completion's answer: its text (forwarded as one `delta`) and tool calls. */
  const answerOf = (completion: OpenAI.Chat.ChatCompletion, onEvent: TurnSink): Effect.Effect<ModelAnswer, RunFailed> => {
    const choice = completion.choices[0]
    if (choice === undefined || choice.finish_reason === null || choice.finish_reason === undefined) {
      return Effect.fail(providerFailed("answered without a finished choice"))
    }
    const text = choice.message.content ?? ""
    const calls = (choice.message.tool_calls ?? []).flatMap((call, index) =>
      call.type === "function" ? [{ id: call.id === "" ? `call_${index}` : call.id, name: call.function.name, arguments: call.function.arguments }] : []
    )
    const answer = { text, calls, usage: usageOf(completion.usage) }
    return text === "" ? Effect.succeed(answer) : Effect.as(onEvent({ type: "delta", text }), answer)
  }

  /**
   * Reads a stream to its end, forwarding text as `delta` events and gathering tool calls by index
   * (the first name and id given win; argument pieces are joined).
   */
  const consume = (stream: ChunkStream, onEvent: TurnSink, call: ModelCall): Effect.Effect<ModelAnswer, RunFailed> =>
    Effect.gen(function* () {
      const iterator = stream[Symbol.asyncIterator]()
      let text = ""
      let finished = false
      let usage: TokenUsage | null = null
      const calls = new Map<number, { id: string; name: string; arguments: string }>()
      for (;;) {
        const next = yield* Effect.tryPromise({
          try: () => iterator.next(),
          catch: (error) => (call.overBudget() ? overBudget() : providerFailed(`broke off its answer (${describeStreamError(error, apiKey)})`))
        })
        if (next.done === true) break
        if (next.value.usage !== null && next.value.usage !== undefined) usage = usageOf(next.value.usage)
        const choice = next.value.choices[0]
        if (choice === undefined) continue
        if (choice.finish_reason !== null && choice.finish_reason !== undefined) finished = true
        const delta = choice.delta
        if (delta === undefined) continue
        if (typeof delta.content === "string" && delta.content !== "") {
          text += delta.content
          yield* onEvent({ type: "delta", text: delta.content })
        }
        for (const part of delta.tool_calls ?? []) {
          const call = calls.get(part.index) ?? { id: "", name: "", arguments: "" }
          calls.set(part.index, {
            id: part.id ?? call.id,
            name: call.name === "" ? (part.function?.name ?? "") : call.name,
            arguments: call.arguments + (part.function?.arguments ?? "")
          })
        }
      }
      // The client ends a stream it aborted as if it were complete.
      if (call.overBudget()) return yield* Effect.fail(overBudget())
      if (!finished) return yield* Effect.fail(providerFailed("broke off its answer (the stream ended before a finish reason)"))
      const ordered = [...calls.entries()].sort(([a], [b]) => a - b)
      return { text, calls: ordered.map(([index, call]) => ({ ...call, id: call.id === "" ? `call_${index}` : call.id })), usage }
    })

  /**
   * One model call under the turn's deadline, streamed or whole (`ReplyDelivery`): its own abort
   * controller, aborted when the deadline passes (the call then fails as over budget), when the
   * call fails and when it is interrupted (a stream read to its end has nothing left to abort, and
   * aborting costs an exception object). A timer rather than a race: racing forks fibers on every
   * call. A whole answer's request may take until the deadline (its headers come only with the
   * answer); a streamed one's headers must come within `requestTimeoutMs`.
   */
  const callModel = (body: OpenAI.Chat.ChatCompletionCreateParamsStreaming, onEvent: TurnSink, deadline: number, whole: boolean) =>
    Effect.suspend(() => {
      const remaining = deadline - Date.now()
      if (remaining <= 0) return Effect.fail(overBudget())
      const controller = new AbortController()
      let passed = false
      const timer = setTimeout(() => {
        passed = true
        controller.abort()
      }, remaining)
      const call: ModelCall = { signal: controller.signal, deadline, overBudget: () => passed }
      const answer = whole
        ? Effect.flatMap(
            open(() => client.chat.completions.create({ ...body, stream: false }, { signal: call.signal, timeout: remaining + 1_000 }), call),
            (completion) => answerOf(completion, onEvent)
          )
        : Effect.flatMap(
            // The last chunk then carries the call's token counts, for the execution's trace.
            open(() => client.chat.completions.create({ ...body, stream_options: { include_usage: true } }, { signal: call.signal }), call),
            (stream) => consume(stream, onEvent, call)
          )
      return answer.pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            clearTimeout(timer)
            if (Exit.isFailure(exit)) controller.abort()
          })
        )
      )
    })

  /** A tool's run under the turn's deadline. */
  const withinBudget = <A>(effect: Effect.Effect<A, RunFailed>, deadline: number): Effect.Effect<A, RunFailed> =>
    Effect.suspend(() => {
      const remaining = deadline - Date.now()
      if (remaining <= 0) return Effect.fail(overBudget())
      return Effect.timeoutFail(effect, { duration: Duration.millis(remaining), onTimeout: overBudget })
    })

  const runTurn = (request: TurnRequest, onEvent: TurnSink): Effect.Effect<TurnResult, RunFailed> =>
    Effect.gen(function* () {
      const deadline = Date.now() + settings.timeBudgetMs
      const whole = (yield* FiberRef.get(ReplyDelivery)) === "whole"
      const steps: Array<TurnStep> = []
      const toolsCalled: Array<ToolCall> = []
      const tools = new Map<string, ModelTool>(request.tools.map((tool) => [tool.name, tool]))
      const checks = new Map(request.tools.map((tool) => [tool.name, validatorOf(tool.parameters)]))
      const offered: Array<OpenAI.Chat.ChatCompletionTool> = request.tools.map((tool) => ({
        type: "function",
        function: { name: tool.name, description: tool.description, parameters: tool.parameters as Record<string, unknown> }
      }))
      const messages: Array<Message> = [
        ...(request.instructions.trim() === "" ? [] : [{ role: "system", content: request.instructions } as const]),
        ...request.history.map((turn): Message => ({ role: turn.role, content: turn.text })),
        { role: "user", content: request.message }
      ]

      /** Runs one call the model asked for; what the model gets back (a result or what was wrong). */
      const answerCall = (call: StreamedCall): Effect.Effect<string, RunFailed> =>
        traced("tool", call.name, () => ({ arguments: argumentsForTrace(call.arguments) }), Effect.gen(function* () {
          const tool = tools.get(call.name)
          if (tool === undefined) return `Error: there is no tool named "${call.name}".`
          let args: unknown
          try {
            args = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments)
          } catch {
            return `Error: the arguments of ${call.name} are not valid JSON.`
          }
          const validate = checks.get(call.name)!
          if (!validate(args)) return `Error: invalid arguments for ${call.name}: ${ajv.errorsText(validate.errors, { dataVar: "arguments" })}.`
          yield* onEvent({ type: "tool", name: call.name, arguments: args })
          toolsCalled.push({ name: call.name, arguments: args })
          return yield* timedStep("tool", call.name, steps, onEvent, withinBudget(tool.run(args), deadline))
        }), (result) => ({ result: tracedText(result) }))

      let reply = ""
      for (let step = 1; step <= settings.maxSteps; step += 1) {
        const body: OpenAI.Chat.ChatCompletionCreateParamsStreaming = {
          model: request.model,
          messages: [...messages],
          stream: true,
          ...(offered.length === 0 ? {} : { tools: offered })
        }
        const answer = yield* timedStep(
          "model",
          request.model,
          steps,
          onEvent,
          traced(
            "model",
            request.model,
            () => ({ model: request.model, provider: "openai", messages: tracedMessages(body.messages.map(tracedMessage)) }),
            callModel(body, onEvent, deadline, whole),
            (answer) => ({
              tokensIn: answer.usage?.input ?? null,
              tokensOut: answer.usage?.output ?? null,
              reply: tracedText(answer.text),
              toolCalls: answer.calls.map((call) => ({ name: call.name, arguments: argumentsForTrace(call.arguments) }))
            })
          )
        )
        reply += answer.text
        if (answer.calls.length === 0) return { reply, toolsCalled, steps }
        if (step === settings.maxSteps) break
        messages.push({
          role: "assistant",
          content: answer.text === "" ? null : answer.text,
          tool_calls: answer.calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } }))
        })
        for (const call of answer.calls) {
          messages.push({ role: "tool", tool_call_id: call.id, content: yield* answerCall(call) })
        }
      }
      return yield* Effect.fail(
        new RunFailed({ message: `The model was still calling tools after ${settings.maxSteps} steps, the most one turn may take.` })
      )
    })

  return { runTurn }
}
