/**
 * A Flow's inputs: the `inputs` list `GET /flows` shows, the same list as a JSON Schema (draft
 * 2020-12) that validates exactly what `POST /flows/{id}/run` accepts as `inputs`, and the
 * validation itself (Ajv, compiled once per schema), naming every problem with its parameter.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { Either } from "effect"
import type { CheckedQuestion } from "./definition.js"
import type { FlowInput } from "./domain.js"
import { reportedProblems } from "./problems.js"
import type { TemplateValue } from "./templates.js"

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

/** The dialect of every inputs schema. */
export const jsonSchemaDialect = "https://json-schema.org/draft/2020-12/schema"

/** A JSON Schema document. */
export type JsonSchema = { readonly [key: string]: unknown }

/** Validated run inputs keyed by parameter name. */
export type FlowInputValues = Readonly<Record<string, TemplateValue>>

/** What the inputs of a Flow derive from: its checked questions. */
export interface FlowQuestions {
  readonly questions: ReadonlyArray<CheckedQuestion>
}

/** The `inputs` list of a Flow: each question under its parameter name, in order. */
export const flowInputs = (flow: FlowQuestions): ReadonlyArray<FlowInput> =>
  flow.questions.map((question) => ({
    name: question.parameter,
    label: question.label,
    type: question.type,
    ...(question.options === null ? {} : { options: question.options }),
    required: question.required,
    ...(question.description === null ? {} : { description: question.description })
  }))

/** An http or https URL with a host (the `uri` format alone also takes `mailto:`, `urn:` and `https://`). */
const httpUrlPattern = "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]+"

const valueSchema = (question: CheckedQuestion): JsonSchema => {
  const options = question.options ?? []
  switch (question.type) {
    case "text":
    case "long_text":
      return question.required ? { type: "string", minLength: 1 } : { type: "string" }
    case "number":
      return { type: "number" }
    case "boolean":
      return { type: "boolean" }
    case "select":
      return { enum: options }
    case "multi_select":
      return { type: "array", items: { enum: options }, uniqueItems: true, ...(question.required ? { minItems: 1 } : {}) }
    case "email":
      return { type: "string", format: "email" }
    case "url":
      return { type: "string", format: "uri", pattern: httpUrlPattern }
    case "date":
      return { type: "string", format: "date" }
  }
}

/**
 * The JSON Schema (draft 2020-12) of a Flow's `inputs`: an object with a property per parameter
 * (titled with its label), the required questions required, nothing else allowed. A Flow without
 * questions takes no inputs (`{}`): it is run with `message`.
 */
export const flowInputsSchema = (flow: FlowQuestions): JsonSchema => ({
  $schema: jsonSchemaDialect,
  type: "object",
  properties: Object.fromEntries(
    flow.questions.map((question) => [
      question.parameter,
      {
        title: question.label,
        ...(question.description === null ? {} : { description: question.description }),
        ...valueSchema(question)
      }
    ])
  ),
  required: flow.questions.filter((question) => question.required).map((question) => question.parameter),
  additionalProperties: false
})

/** The one Ajv instance (draft 2020-12, with formats) inputs schemas are compiled in. */
export const inputsAjv = new Ajv2020({ allErrors: true, strict: true, verbose: true, ownProperties: true })
addFormats(inputsAjv)

/** Most compiled inputs schemas kept; the least recently used is dropped beyond it. */
export const maxCachedValidators = 1_000

const validators = new Map<string, ValidateFunction>()

/** The compiled validator of a schema: compiled once, then taken from the cache. */
export const inputsValidator = (schema: JsonSchema): ValidateFunction => {
  const key = JSON.stringify(schema)
  const cached = validators.get(key)
  if (cached !== undefined) {
    validators.delete(key)
    validators.set(key, cached)
    return cached
  }
  const validate = inputsAjv.compile(schema)
  validators.set(key, validate)
  if (validators.size > maxCachedValidators) {
    const [oldestKey, oldest] = validators.entries().next().value as [string, ValidateFunction]
    validators.delete(oldestKey)
    inputsAjv.removeSchema(oldest.schema as object)
  }
  return validate
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/

const inputPath = (segments: ReadonlyArray<string>): string =>
  segments.reduce(
    (path, segment) =>
      /^[0-9]+$/.test(segment) ? `${path}[${segment}]` : identifier.test(segment) ? `${path}.${segment}` : `${path}[${JSON.stringify(segment)}]`,
    "inputs"
  )

const pointerSegments = (pointer: string): ReadonlyArray<string> =>
  pointer === "" ? [] : pointer.slice(1).split("/").map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"))

const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 60 ? `${text.slice(0, 60)}…` : text
}

const kindOf = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "a list" : typeof value === "object" ? "an object" : `a ${typeof value}`

const expected: Readonly<Record<string, string>> = {
  string: "text",
  number: "a number",
  boolean: "true or false",
  array: "a list of options",
  object: "an object keyed by parameter name"
}

const formatWanted: Readonly<Record<string, string>> = {
  email: "an email address",
  uri: "an http or https URL",
  date: "a date as YYYY-MM-DD"
}

const describeError = (error: ErrorObject, questions: ReadonlyMap<string, CheckedQuestion>): [string, string] => {
  const segments = pointerSegments(error.instancePath)
  const question = segments[0] === undefined ? undefined : questions.get(segments[0])
  const options = question?.options?.join(", ") ?? ""
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case "required": {
      const name = String(params.missingProperty)
      return [inputPath([name]), `missing; "${questions.get(name)?.label ?? name}" is required`]
    }
    case "additionalProperties": {
      const name = String(params.additionalProperty)
      const known = [...questions.keys()]
      return [inputPath([name]), `unknown input; this Flow takes ${known.length > 0 ? known.join(", ") : "no inputs"}`]
    }
    case "enum":
      return [inputPath(segments), `${shown(error.data)} is not one of the options: ${options}`]
    case "type":
      return [inputPath(segments), `expected ${expected[String(params.type)] ?? String(params.type)}, got ${kindOf(error.data)}`]
    case "format":
      return [inputPath(segments), `expected ${formatWanted[String(params.format)] ?? String(params.format)}, got ${shown(error.data)}`]
    case "pattern":
      return [inputPath(segments), `expected ${formatWanted.uri}, got ${shown(error.data)}`]
    case "minLength":
      return [inputPath(segments), `must not be empty; "${question?.label ?? segments[0]}" is required`]
    case "minItems":
      return [inputPath(segments), `choose at least one option; "${question?.label ?? segments[0]}" is required`]
    case "uniqueItems": {
      const list = Array.isArray(error.data) ? (error.data as ReadonlyArray<unknown>) : []
      return [inputPath(segments), `chooses ${shown(list[Number(params.j)])} more than once`]
    }
    default:
      return [inputPath(segments), error.message ?? "is invalid"]
  }
}

/**
 * Validates a run's `inputs` against the Flow's inputs schema: the values keyed by parameter name,
 * or every problem (one per input, each naming it: `inputs.budget: expected a number, got a
 * string`; bounded by `reportedProblems`). Absent `inputs` is an empty object.
 */
export const validateFlowInputs = (flow: FlowQuestions, inputs: unknown): Either.Either<FlowInputValues, ReadonlyArray<string>> => {
  const value = inputs === undefined ? {} : inputs
  const validate = inputsValidator(flowInputsSchema(flow))
  if (validate(value)) return Either.right(value as FlowInputValues)
  const questions = new Map(flow.questions.map((question) => [question.parameter, question]))
  const byPath = new Map<string, string>()
  for (const error of validate.errors ?? []) {
    const [path, message] = describeError(error, questions)
    if (!byPath.has(path)) byPath.set(path, message)
  }
  return Either.left(reportedProblems([...byPath].map(([path, message]) => `${path}: ${message}`)))
}
