/**
 * The sweep: every answer recorded from a real run of the test suite (`SVC_RECORD_RESPONSES`,
 * test/support/response-recorder.ts) is checked against the served OpenAPI document with Ajv
 * (JSON Schema 2020-12): its status must be declared for its operation, its content type among
 * the status's media types, a JSON body must validate against the declared schema, and each event
 * of a `text/event-stream` answer against its schema under `x-events`. Answers to a path and method
 * no operation has (the 404s and 405s of made-up paths) are counted, not judged.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { isRecordingFile, type RecordedResponse } from "./recorded-response.js"

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020
type Json = Record<string, any>

/** One kind of mismatch, with how often it was seen and one request that showed it. */
export interface SweepProblem {
  readonly operation: string
  readonly status: number
  readonly message: string
  readonly count: number
  readonly example: string
}

/** What the sweep found. */
export interface SweepReport {
  readonly records: number
  /** Answers whose status, content type and body (or events) were checked. */
  readonly validated: number
  /** Answers to a method and path no operation of the document has. */
  readonly noOperation: number
  /** Answers whose body was too large to record (status and content type still checked). */
  readonly bodyOmitted: number
  /** Operations of the document that no recorded answer reached. */
  readonly operationsSeen: number
  readonly operations: number
  readonly problems: ReadonlyArray<SweepProblem>
}

const documentId = "svc-openapi.json"
const methods = ["get", "post", "put", "patch", "delete"]

interface Route {
  readonly template: string
  readonly pattern: RegExp
  /** Segments that are not parameters: the most literal template wins (`/pages/tree` before `/pages/{pageId}`). */
  readonly literals: number
}

/** `/a/b~c` as one JSON pointer segment. */
const pointerSegment = (text: string) => text.replace(/~/g, "~0").replace(/\//g, "~1")
const pointer = (...segments: ReadonlyArray<string>) => segments.map(pointerSegment).join("/")

/** The events of a `text/event-stream` body: each `event:` name with its `data:` text. */
const streamEvents = (body: string): Array<{ event: string; data: string }> =>
  body
    .split(/\r?\n\r?\n/)
    .map((block) => {
      const lines = block.split(/\r?\n/)
      const event = lines.find((line) => line.startsWith("event:"))?.slice(6).trim() ?? "message"
      const data = lines.filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart()).join("\n")
      return { event, data }
    })
    .filter((item) => item.data !== "")

/** A text as JSON, or undefined when it is not JSON. */
const parsed = (text: string): { value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) }
  } catch {
    return undefined
  }
}

/** Ajv 2020 (with formats) holding `document`, and its validator of the schema at a JSON pointer, compiled once. */
const documentValidators = (document: Json) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  ajv.addSchema({ ...document, $id: documentId })
  const validators = new Map<string, ValidateFunction>()
  const validatorAt = (at: string): ValidateFunction => {
    let validate = validators.get(at)
    if (validate === undefined) {
      validate = ajv.getSchema(`${documentId}#${at}`)
      if (validate === undefined) throw new Error(`no schema at ${at}`)
      validators.set(at, validate)
    }
    return validate
  }
  return { ajv, validatorAt }
}

/**
 * Loads `document` into Ajv 2020 and compiles the schema of every response of every operation
 * (and of every streamed event under `x-events`); answers how many. Throws what Ajv throws.
 */
export const compileResponseSchemas = (document: Json): number => {
  const { validatorAt } = documentValidators(document)
  let count = 0
  for (const [template, item] of Object.entries(document.paths ?? {}) as Array<[string, Json]>) {
    for (const method of methods.filter((name) => item[name] !== undefined)) {
      for (const [status, response] of Object.entries(item[method].responses ?? {}) as Array<[string, Json]>) {
        for (const [media, content] of Object.entries(response.content ?? {}) as Array<[string, Json]>) {
          const base = pointer("", "paths", template, method, "responses", status, "content", media)
          if (content.schema !== undefined) validatorAt(`${base}/schema`)
          for (const event of Object.keys(content["x-events"] ?? {})) validatorAt(`${base}/${pointer("x-events", event, "schema")}`)
          count++
        }
      }
    }
  }
  return count
}

/** Checks every record of `records` against `document` (the served OpenAPI document). */
export const sweepRecords = (document: Json, records: Iterable<RecordedResponse>): SweepReport => {
  const { ajv, validatorAt } = documentValidators(document)
  const routes: Array<Route> = Object.keys(document.paths ?? {}).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+")}$`),
    literals: template.split("/").filter((segment) => segment !== "" && !segment.startsWith("{")).length
  }))
  const routeOf = (method: string, path: string): string | undefined =>
    routes
      .filter((route) => document.paths[route.template][method] !== undefined && route.pattern.test(path))
      .sort((a, b) => b.literals - a.literals)[0]?.template

  const problems = new Map<string, { operation: string; status: number; message: string; count: number; example: string }>()
  const seen = new Set<string>()
  let total = 0
  let validated = 0
  let noOperation = 0
  let bodyOmitted = 0
  for (const record of records) {
    total++
    const method = record.method.toLowerCase()
    const template = methods.includes(method) ? routeOf(method, record.path) : undefined
    if (template === undefined) {
      noOperation++
      continue
    }
    const operation = document.paths[template][method]
    const operationId: string = operation.operationId ?? `${method} ${template}`
    seen.add(operationId)
    const problem = (message: string) => {
      const key = `${operationId} ${record.status} ${message}`
      const found = problems.get(key)
      if (found) found.count++
      else problems.set(key, { operation: operationId, status: record.status, message, count: 1, example: `${record.method} ${record.path}${record.query}` })
    }
    const declared = operation.responses?.[String(record.status)]
    if (declared === undefined) {
      problem(`status not declared (declared: ${Object.keys(operation.responses ?? {}).join(", ")})`)
      continue
    }
    const media = Object.keys(declared.content ?? {})
    const contentType = record.contentType.split(";")[0]!.trim()
    if (record.bodyOmitted) bodyOmitted++
    if (media.length === 0) {
      if (record.body !== undefined && record.body !== "") problem("a body where none is declared")
      else validated++
      continue
    }
    if (!media.includes(contentType)) {
      problem(`content type '${contentType}' not declared (${media.join(", ")})`)
      continue
    }
    if (record.body === undefined) continue
    const base = pointer("", "paths", template, method, "responses", String(record.status), "content", contentType)
    if (contentType === "application/json") {
      const validate = validatorAt(`${base}/schema`)
      const body = parsed(record.body)
      if (body === undefined) problem("the body is not JSON")
      else if (!validate(body.value)) problem(`body does not match its schema: ${ajv.errorsText(validate.errors, { separator: "; " })}`)
    } else if (contentType === "text/event-stream") {
      const events = declared.content[contentType]["x-events"] ?? {}
      for (const { event, data } of streamEvents(record.body)) {
        if (events[event] === undefined) {
          problem(`event '${event}' not declared (${Object.keys(events).join(", ")})`)
          continue
        }
        const validate = validatorAt(`${base}/${pointer("x-events", event, "schema")}`)
        const value = parsed(data)
        if (value === undefined) problem(`event '${event}': its data is not JSON`)
        else if (!validate(value.value)) problem(`event '${event}' does not match its schema: ${ajv.errorsText(validate.errors, { separator: "; " })}`)
      }
    }
    validated++
  }
  const operations = Object.values(document.paths ?? {}).reduce(
    (count: number, item) => count + Object.keys(item as Json).filter((key) => methods.includes(key)).length,
    0
  )
  return {
    records: total,
    validated,
    noOperation,
    bodyOmitted,
    operationsSeen: seen.size,
    operations,
    problems: [...problems.values()].sort((a, b) => b.count - a.count)
  }
}

/** Reads every recorded answer under `dir` (the `responses-*.jsonl` files). */
export function* readRecordings(dir: string): Generator<RecordedResponse> {
  for (const name of readdirSync(dir).filter(isRecordingFile).sort()) {
    for (const line of readFileSync(join(dir, name), "utf8").split("\n")) {
      if (line !== "") yield JSON.parse(line) as RecordedResponse
    }
  }
}
