/** Helpers of the run suites: a server on a fake model, Agents made over HTTP, SSE reading, database counts. */
import { Effect } from "effect"
import { SqlClient } from "@effect/sql"
import { numberPlaceholders } from "../../server/platform/sql/pg-read-connection.js"
import type { ServerOptions } from "../../server/server.js"
import { afterAll, beforeAll, beforeEach, expect } from "vitest"
import { type FakeOpenAi, type FakeResponse, say, type SeenRequest, startFakeOpenAi } from "../support/fake-openai.js"
import { setCredits } from "../support/knowledge.js"
import { startTestServer, type TestServer } from "../support/server.js"

/** A run suite's server on a fake OpenAI-compatible model, as `fakeModelSuite` set it up. */
export interface FakeModelSuite {
  /** How the fake model answers: a test sets it; it is back to `say("ok")` before each test. */
  answer: (request: SeenRequest, n: number) => FakeResponse
  /** The fake model on its real socket (the requests it saw, its aborts). */
  readonly fake: FakeOpenAi
  /** The test server whose model is the fake. */
  readonly server: TestServer
}

/** What a suite's server on the fake model runs with. */
export interface FakeModelSuiteOptions {
  /** The server's default model (`builtin` or a name the fake answers) and how often a model call is tried. */
  readonly model: { readonly defaultModel: string; readonly maxAttempts: number }
  /** Run settings over the suite's (keep-alive comments every 100 ms), and instance settings. */
  readonly server?: Pick<Partial<ServerOptions>, "runs" | "instances">
}

/**
 * Registers the hooks of a run suite on a fake OpenAI-compatible model: before all, the fake and a
 * test server on it (model retries 1 ms apart), then `setUp` with both; before each test, the clock
 * a minute on (a fresh rate-limit window), 1,000 credits and the fake answering `say("ok")`; after
 * all, both stopped. Answers the suite, whose `fake` and `server` are set once `setUp` runs.
 */
export const fakeModelSuite = (options: FakeModelSuiteOptions, setUp: (suite: FakeModelSuite) => Promise<void> = async () => undefined): FakeModelSuite => {
  const ok = (): FakeResponse => say("ok")
  const suite: { answer: FakeModelSuite["answer"]; fake?: FakeOpenAi; server?: TestServer } = { answer: ok }
  const started = (): FakeModelSuite => suite as FakeModelSuite
  beforeAll(async () => {
    suite.fake = await startFakeOpenAi((request, n) => suite.answer(request, n))
    suite.server = await startTestServer({
      server: {
        ...options.server,
        model: { baseUrl: suite.fake.baseUrl, backoffMs: 1, ...options.model },
        runs: { keepAliveMs: 100, ...options.server?.runs }
      }
    })
    await setUp(started())
  })
  afterAll(async () => {
    await suite.server?.stop()
    await suite.fake?.close()
  })
  beforeEach(async () => {
    started().server.clock.advance(60_000)
    await setCredits(started().server, 1_000)
    suite.answer = ok
  })
  return started()
}

/** Creates an Agent over HTTP (published unless `publish: false`); answers its id. */
export const createAgent = async (
  server: TestServer,
  body: Record<string, unknown> = {},
  options: { publish?: boolean; key?: string } = {}
): Promise<string> => {
  const key = options.key === undefined ? {} : { key: options.key }
  const created = await server.request("POST", "/agents", { body: { name: "Runner", ...body }, ...key })
  expect({ status: created.status, body: created.body }).toMatchObject({ status: 201 })
  const id = created.body.agent.id as string
  if (options.publish !== false) {
    const published = await server.request("POST", `/agents/${id}/publish`, key)
    expect(published.status).toBe(200)
  }
  return id
}

/** One parsed SSE event. */
export interface SseEvent {
  readonly event: string
  readonly data: any
}

/** Parses complete SSE frames out of `buffer`; answers the events (comments as `comment`) and the rest. */
export const parseFrames = (buffer: string): { events: Array<SseEvent>; rest: string } => {
  const events: Array<SseEvent> = []
  let rest = buffer
  for (let end = rest.indexOf("\n\n"); end !== -1; end = rest.indexOf("\n\n")) {
    const frame = rest.slice(0, end)
    rest = rest.slice(end + 2)
    if (frame.startsWith(":")) {
      events.push({ event: "comment", data: frame.slice(1).trim() })
      continue
    }
    const lines = frame.split("\n")
    const event = lines.find((line) => line.startsWith("event: "))?.slice(7) ?? "message"
    const data = lines.filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\n")
    events.push({ event, data: JSON.parse(data) })
  }
  return { events, rest }
}

/** A streamed request: its response and an iterator over its events. */
export const openStream = async (server: TestServer, path: string, body: unknown, signal?: AbortSignal) => {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal })
  })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  const pending: Array<SseEvent> = []
  /** The next frame, keep-alive comments included. */
  const frame = async (): Promise<SseEvent | null> => {
    for (;;) {
      if (pending.length > 0) return pending.shift()!
      const chunk = await reader.read()
      if (chunk.done) return null
      buffer += decoder.decode(chunk.value, { stream: true })
      const parsed = parseFrames(buffer)
      buffer = parsed.rest
      pending.push(...parsed.events)
    }
  }
  /** The next event; keep-alive comments (every `keepAliveMs`, which a loaded machine can let come first) are passed over. */
  const next = async (): Promise<SseEvent | null> => {
    for (let event = await frame(); ; event = await frame()) if (event?.event !== "comment") return event
  }
  /** Every frame to the end, comments included. */
  const all = async () => {
    const events: Array<SseEvent> = []
    for (let event = await frame(); event !== null; event = await frame()) events.push(event)
    return events
  }
  return { response, next, all }
}

/** Rows counted by a SQL query on the server's database. */
export const count = (server: TestServer, query: string, params: ReadonlyArray<unknown> = []) =>
  server.admin(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.unsafe<{ n: number }>(sql.onDialectOrElse({ pg: () => numberPlaceholders(query), orElse: () => query }), params as Array<unknown>)
    ).pipe(
      Effect.map((rows) => Number(rows[0]?.n ?? 0)),
      Effect.orDie
    )
  )
