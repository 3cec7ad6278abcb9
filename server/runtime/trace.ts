/**
 * The trace of an execution as it runs: timed spans (model calls, tool calls, an App's routing
 * decision, a transaction's validation) with their parent/child structure and what each saw.
 *
 * A recorder travels in a `FiberRef` set by the execution (`withTrace`) and keeps the span being
 * run (an execution's steps run one at a time), so a step nested in another (an Agent turn inside
 * an App member's tool) becomes its child with no interface changing. Outside an execution there
 * is no recorder: `traced` runs the step as it is, for the price of one `FiberRef` read. What is
 * kept is bounded (`traceLimits`): texts are cut and marked, spans beyond the most are dropped
 * and the trace marked truncated.
 */
import { Effect, Exit, FiberRef } from "effect"
import { isoAt } from "../platform/clock.js"
import type { Citation } from "../knowledge/search/domain.js"

/** The bounds of a stored trace. */
export const traceLimits = {
  /** Characters kept of each text: a message, a reply, a tool's result, a passage. */
  textChars: 2_000,
  /** Messages of one model call listed with their text (the last ones; all are counted). */
  messagesListed: 20,
  /** Spans kept per execution. */
  spans: 200
} as const

/** A text cut to `traceLimits.textChars`. */
export interface TracedText {
  readonly text: string
  readonly truncated: boolean
}

/** A message sent to a model. */
export interface TracedMessage extends TracedText {
  readonly role: "system" | "user" | "assistant" | "tool"
}

/** The messages of one model call: how many of each role, and the last ones with their text. */
export interface TracedMessages {
  readonly count: number
  readonly byRole: { readonly system: number; readonly user: number; readonly assistant: number; readonly tool: number }
  readonly sent: ReadonlyArray<TracedMessage>
}

/** A passage a search answered, with its citation and score. */
export interface TracedPassage {
  readonly text: string
  readonly truncated: boolean
  readonly source: string
  readonly section: string | null
  readonly score: number
  /** The search's citation of the hit (its Knowledgebase, source or page, passage, section). */
  readonly citation: Citation
}

/** The App Supervisor's routing decision. */
export interface TracedRoute {
  readonly member: { readonly kind: "agent" | "flow"; readonly id: string; readonly name: string; readonly version: number }
  /** `description`: builtin matched words of the member; `first`: builtin matched none; `model`: a language model called the member's tool. */
  readonly by: "description" | "first" | "model"
  readonly matched: ReadonlyArray<string>
}

/** A validation of the Transaction Service. */
export interface TracedValidation {
  readonly schema: "output"
  readonly valid: boolean
  readonly problems: ReadonlyArray<string>
}

/** What a span may say beyond its timing, by kind. */
export interface SpanFields {
  readonly model?: string
  readonly provider?: "builtin" | "openai"
  readonly messages?: TracedMessages
  readonly tokensIn?: number | null
  readonly tokensOut?: number | null
  readonly reply?: TracedText
  readonly toolCalls?: ReadonlyArray<{ readonly name: string; readonly arguments: unknown }>
  readonly arguments?: unknown
  readonly result?: TracedText
  readonly passages?: ReadonlyArray<TracedPassage>
  readonly route?: TracedRoute
  readonly validation?: TracedValidation
}

/** What kind of step a span is. */
export type SpanKind = "model" | "tool" | "route" | "validation"

/** One recorded span. */
export interface TraceSpan extends SpanFields {
  readonly id: string
  readonly parentId: string | null
  readonly kind: SpanKind
  readonly name: string
  readonly startedAt: string
  readonly finishedAt: string
  readonly durationMs: number
  readonly status: "ok" | "error"
  readonly error?: string
}

/** A finished trace: its spans in the order they started. */
export interface ExecutionTrace {
  readonly spans: ReadonlyArray<TraceSpan>
  /** True when spans beyond `traceLimits.spans` were dropped. */
  readonly truncated: boolean
}

/** A span being recorded. */
interface OpenSpan {
  readonly id: string
  readonly parentId: string | null
  readonly kind: SpanKind
  readonly name: string
  readonly startedMs: number
  readonly startedAt: number
  fields: SpanFields
  finished?: { readonly finishedMs: number; readonly status: "ok" | "error"; readonly error?: string }
}

/** Collects the spans of one execution. */
export interface TraceRecorder {
  /** @internal The span being run: the parent of the next one (an execution's steps run one at a time). */
  current: OpenSpan | null
  /** The spans recorded so far (finished or not), as a finished trace; a span still open ends now. */
  readonly finish: () => ExecutionTrace
  /** @internal */
  readonly open: (kind: SpanKind, name: string, parentId: string | null, fields: SpanFields) => OpenSpan | null
}

/** A new recorder for one execution. */
export const makeTraceRecorder = (): TraceRecorder => {
  const spans: Array<OpenSpan> = []
  let dropped = false
  return {
    current: null,
    open: (kind, name, parentId, fields) => {
      if (spans.length >= traceLimits.spans) {
        dropped = true
        return null
      }
      const span: OpenSpan = { id: String(spans.length + 1), parentId, kind, name, startedMs: Date.now(), startedAt: performance.now(), fields }
      spans.push(span)
      return span
    },
    finish: () => {
      const now = performance.now()
      return {
        truncated: dropped,
        spans: spans.map((span): TraceSpan => {
          const end = span.finished ?? { finishedMs: Date.now(), status: "error" as const, error: "Not finished when the execution ended." }
          const durationMs = Math.round(((span.finished === undefined ? now : end.finishedMs) - span.startedAt) * 100) / 100
          return {
            id: span.id,
            parentId: span.parentId,
            kind: span.kind,
            name: span.name,
            startedAt: isoAt(span.startedMs),
            // Floored: the wall clock's start is cut to the millisecond, so a rounded end could pass the next span's start.
            finishedAt: isoAt(span.startedMs + Math.max(0, Math.floor(durationMs))),
            durationMs: Math.max(0, durationMs),
            status: end.status,
            ...(end.error === undefined ? {} : { error: end.error }),
            ...span.fields
          }
        })
      }
    }
  }
}

/** The recorder of the execution being run, if any: one `FiberRef`, read once per step and set once per execution. */
const CurrentRecorder: FiberRef.FiberRef<TraceRecorder | null> = FiberRef.unsafeMake<TraceRecorder | null>(null)

/** Runs `effect` recording its spans in `recorder` (an execution's producer). */
export const withTrace = <A, E, R>(recorder: TraceRecorder, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, CurrentRecorder, recorder)

/** `text` cut to `traceLimits.textChars`. */
export const tracedText = (text: string): TracedText =>
  text.length <= traceLimits.textChars ? { text, truncated: false } : { text: text.slice(0, traceLimits.textChars), truncated: true }

/** The messages of a model call, counted by role, the last `traceLimits.messagesListed` with their text. */
export const tracedMessages = (messages: ReadonlyArray<{ readonly role: TracedMessage["role"]; readonly text: string }>): TracedMessages => {
  const byRole = { system: 0, user: 0, assistant: 0, tool: 0 }
  for (const message of messages) byRole[message.role] += 1
  return {
    count: messages.length,
    byRole,
    sent: messages.slice(-traceLimits.messagesListed).map((message) => ({ role: message.role, ...tracedText(message.text) }))
  }
}

const describeFailure = (cause: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(cause)) return ""
  const failure = cause.cause
  if (failure._tag === "Fail") {
    const error = failure.error as { message?: unknown }
    return typeof error?.message === "string" ? error.message : String(failure.error)
  }
  return failure._tag === "Interrupt" ? "Interrupted." : "Failed."
}

/**
 * Runs `effect` as a span of `kind` named `name` with `fields()`, adding `after(value)` to them
 * when it succeeds; its nested spans are its children. Without a recorder (outside an execution)
 * it is `effect` itself, and neither `fields` nor `after` is called.
 */
export const traced = <A, E, R>(
  kind: SpanKind,
  name: string,
  fields: () => SpanFields,
  effect: Effect.Effect<A, E, R>,
  after?: (value: A) => SpanFields
): Effect.Effect<A, E, R> =>
  Effect.flatMap(FiberRef.get(CurrentRecorder), (recorder) => {
    if (recorder === null) return effect
    // The current span lives in the recorder rather than in a FiberRef: setting a FiberRef copies
    // the fiber's map of them, which measured about 4 µs a step.
    return Effect.suspend(() => {
      const parent = recorder.current
      const span = recorder.open(kind, name, parent?.id ?? null, fields())
      if (span === null) return effect
      recorder.current = span
      return Effect.onExit(effect, (exit) =>
        Effect.sync(() => {
          recorder.current = parent
          if (Exit.isSuccess(exit) && after !== undefined) span.fields = { ...span.fields, ...after(exit.value) }
          span.finished = Exit.isSuccess(exit)
            ? { finishedMs: performance.now(), status: "ok" }
            : { finishedMs: performance.now(), status: "error", error: describeFailure(exit) }
        })
      )
    })
  })

/** Adds `fields()` to the span being run (a search's passages); outside a span `fields` is not called. */
export const annotateSpan = (fields: () => SpanFields): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(CurrentRecorder), (recorder) => {
    const span = recorder?.current ?? null
    return span === null ? Effect.void : Effect.sync(() => void (span.fields = { ...span.fields, ...fields() }))
  })
