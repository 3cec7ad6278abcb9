/**
 * Final touches on the generated OpenAPI description: our error envelope replaces the framework's
 * decode-error shape, the headers every response carries are documented, the streamed answers of
 * the run endpoints (`stream: true`) are declared as `text/event-stream` with their events, and
 * `Schema.Unknown`'s `"$id": "/schemas/unknown"` (one `$id` on a dozen subschemas, which JSON
 * Schema validators refuse to load) is dropped: an unconstrained value is `{}`.
 */
type Json = Record<string, any>

const frameworkSchemas = ["HttpApiDecodeError", "Issue", "PropertyKey"]

const isFrameworkRef = (schema: Json | undefined): boolean =>
  typeof schema?.$ref === "string" && frameworkSchemas.some((name) => schema.$ref === `#/components/schemas/${name}`)

const cleanSchema = (schema: Json): Json => {
  if (Array.isArray(schema.anyOf)) {
    const kept = schema.anyOf.filter((member: Json) => !isFrameworkRef(member))
    return kept.length === 1 ? kept[0] : { ...schema, anyOf: kept }
  }
  return schema
}

/** The `$id` `JSONSchema.make` gives `Schema.Unknown`, the same on every such subschema. */
const unknownId = "/schemas/unknown"

/** Drops every `"$id": "/schemas/unknown"` under `value` (in place). */
const dropUnknownIds = (value: unknown): void => {
  if (Array.isArray(value)) return value.forEach(dropUnknownIds)
  if (value === null || typeof value !== "object") return
  const object = value as Json
  if (object.$id === unknownId) delete object.$id
  for (const child of Object.values(object)) dropUnknownIds(child)
}

/** Whether an operation's JSON body (any member of it) has a `stream` property. */
const takesStream = (operation: Json, schemas: Json): boolean => {
  const resolve = (schema: Json | undefined): Json | undefined =>
    typeof schema?.$ref === "string" ? schemas[String(schema.$ref).split("/").pop()!] : schema
  const body = resolve(operation.requestBody?.content?.["application/json"]?.schema)
  const members: Array<Json | undefined> = Array.isArray(body?.anyOf) ? body.anyOf.map(resolve) : [body]
  return members.some((member) => member?.properties?.stream !== undefined)
}

const textEvent = (properties: Json, required: ReadonlyArray<string>): Json => ({ type: "object", properties, required })

/** The events of a streamed run (conventions: Streaming), each one's `data` as JSON. */
const streamEvents = (done: Json): Json => ({
  start: {
    description: "First, once: the execution's id (and the conversation's, for a conversation).",
    schema: textEvent({ executionId: { type: "string" }, conversation_id: { type: "string" } }, ["executionId"])
  },
  tool: { description: "A tool (or Flow step, or App member) as it starts.", schema: textEvent({ name: { type: "string" } }, ["name"]) },
  delta: { description: "The next piece of the reply's text.", schema: textEvent({ text: { type: "string" } }, ["text"]) },
  done: { description: "Last, on success: the answer the call gives without `stream`.", schema: done },
  error: {
    description: "Last, on failure: the error envelope.",
    schema: textEvent(
      { error: textEvent({ code: { type: "string" }, message: { type: "string" } }, ["code", "message"]) },
      ["error"]
    )
  }
})

/**
 * Declares the `text/event-stream` answer of an operation that takes `stream`, and returns the
 * schema of its `done` event (its JSON answer), or `undefined` when it takes no `stream`.
 */
const declareStream = (operation: Json, schemas: Json): Json | undefined => {
  const ok = operation.responses?.["200"]
  const json = ok?.content?.["application/json"]
  if (json === undefined || !takesStream(operation, schemas)) return undefined
  ok.content["text/event-stream"] = {
    schema: {
      type: "string",
      description:
        "With `stream: true`: server-sent events, `event: start`, then `tool` and `delta` events, then exactly one `done` or `error`; each event's `data` is one JSON value (`x-events`), and a `: keep-alive` comment comes every 15 s."
    },
    "x-events": streamEvents(json.schema)
  }
  return json.schema
}

/**
 * Gives the events of a run to every other `text/event-stream` answer (a run's events replayed):
 * its `done` is the answer of whichever streamed operation started the run.
 */
const declareReplayedEvents = (operations: ReadonlyArray<Json>, doneSchemas: ReadonlyArray<Json>): void => {
  const distinct = [...new Map(doneSchemas.map((schema) => [JSON.stringify(schema), schema])).values()]
  for (const operation of operations) {
    const media = operation.responses?.["200"]?.content?.["text/event-stream"]
    if (media !== undefined && media["x-events"] === undefined) media["x-events"] = streamEvents({ anyOf: distinct })
  }
}

/** Cleans and completes the OpenAPI document generated from the `HttpApi` definition. */
export const cleanOpenApi = (spec: Json): Json => {
  const out: Json = structuredClone(spec)
  out.servers = [{ url: "http://127.0.0.1:8787", description: "`svc serve` on its default address" }]
  out.components ??= {}
  out.components.headers = {
    RequestId: {
      description: "Identifies the request; quote it when reporting a problem.",
      schema: { type: "string" }
    },
    RetryAfter: { description: "Seconds to wait before retrying.", schema: { type: "integer" } },
    IdempotentReplayed: {
      description: "`true` when this is the stored response (a success or an expected failure) of an earlier request with the same Idempotency-Key.",
      schema: { type: "string", enum: ["true"] }
    },
    Deprecation: {
      description: "The answer concerns a deprecated feature (RFC 9745): `@` and the unix time it was deprecated.",
      schema: { type: "string" }
    }
  }
  for (const name of frameworkSchemas) delete out.components.schemas?.[name]
  for (const scheme of Object.values(out.components.securitySchemes ?? {}) as Array<Json>) {
    scheme.description = "An organization or personal API key: `Authorization: Bearer <API_KEY>`."
  }
  dropUnknownIds(out)
  const operations = (Object.values(out.paths ?? {}) as Array<Json>).flatMap((pathItem) => Object.values(pathItem) as Array<Json>)
  const doneSchemas = operations.flatMap((operation) => declareStream(operation, out.components.schemas ?? {}) ?? [])
  declareReplayedEvents(operations, doneSchemas)
  for (const operation of operations) {
    const takesIdempotencyKey = (operation.parameters ?? []).some((p: Json) => p.name === "idempotency-key")
    const marksDeprecation = operation.deprecated === true || Array.isArray(operation["x-deprecated-fields"])
    for (const [status, response] of Object.entries(operation.responses ?? {}) as Array<[string, Json]>) {
      const media = response.content?.["application/json"]
      if (media?.schema) media.schema = cleanSchema(media.schema)
      if (status === "400") response.description = "invalid_request (or another 400 code of the contract)"
      response.headers = { "X-Request-Id": { $ref: "#/components/headers/RequestId" } }
      if (status === "429") response.headers["Retry-After"] = { $ref: "#/components/headers/RetryAfter" }
      if (takesIdempotencyKey && Number(status) < 500) {
        response.headers["Idempotent-Replayed"] = { $ref: "#/components/headers/IdempotentReplayed" }
      }
      if (marksDeprecation) response.headers["Deprecation"] = { $ref: "#/components/headers/Deprecation" }
    }
  }
  return out
}
