/** Helpers of the run suites: Agents made over HTTP, SSE reading, database counts. */
import { Effect } from "effect"
import { SqlClient } from "@effect/sql"
import { numberPlaceholders } from "../../server/platform/sql/pg-read-connection.js"
import { expect } from "vitest"
import type { TestServer } from "../support/server.js"

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
  const next = async (): Promise<SseEvent | null> => {
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
  const all = async () => {
    const events: Array<SseEvent> = []
    for (let event = await next(); event !== null; event = await next()) events.push(event)
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
