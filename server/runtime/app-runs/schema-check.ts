/**
 * Transaction inputs and outputs checked against an App's published JSON Schemas (draft 2020-12)
 * with Ajv and its formats, every problem named by its path. Each schema is compiled once and
 * cached (the least recently used of `maxCachedSchemas` is dropped).
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, ownProperties: true }))

/** Most compiled schemas kept. */
export const maxCachedSchemas = 1_000

const validators = new Map<string, ValidateFunction>()

const validatorOf = (schema: Record<string, unknown>): ValidateFunction => {
  const key = JSON.stringify(schema)
  const cached = validators.get(key)
  if (cached !== undefined) {
    validators.delete(key)
    validators.set(key, cached)
    return cached
  }
  const validate = ajv.compile(schema)
  validators.set(key, validate)
  if (validators.size > maxCachedSchemas) {
    const [oldestKey, oldest] = validators.entries().next().value as [string, ValidateFunction]
    validators.delete(oldestKey)
    ajv.removeSchema(oldest.schema as object)
  }
  return validate
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/

/** `/a/0/b c` under `root` as `root.a[0]["b c"]`. */
const pathOf = (root: string, pointer: string): string =>
  pointer
    .split("/")
    .slice(1)
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce(
      (path, segment) =>
        /^[0-9]+$/.test(segment) ? `${path}[${segment}]` : identifier.test(segment) ? `${path}.${segment}` : `${path}[${JSON.stringify(segment)}]`,
      root
    )

const describe = (root: string, error: ErrorObject): string => {
  const params = error.params as Record<string, unknown>
  if (error.keyword === "required") return `${pathOf(root, `${error.instancePath}/${String(params["missingProperty"])}`)}: is required`
  if (error.keyword === "additionalProperties") {
    return `${pathOf(root, `${error.instancePath}/${String(params["additionalProperty"])}`)}: is not allowed`
  }
  return `${pathOf(root, error.instancePath)}: ${error.message ?? "is not valid"}`
}

/** Every problem of `value` under `schema`, each naming its path below `root` (empty when valid). */
export const schemaProblems = (root: string, schema: Record<string, unknown>, value: unknown): ReadonlyArray<string> => {
  const validate = validatorOf(schema)
  if (validate(value)) return []
  return [...new Set((validate.errors ?? []).map((error) => describe(root, error)))]
}
