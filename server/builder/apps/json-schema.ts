/**
 * The Transaction Service's contracts are JSON Schemas (draft 2020-12), checked with Ajv's
 * meta-schema when a draft is saved, so a broken contract never reaches a run.
 */
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }))

/** What is wrong with `schema` as a JSON Schema 2020-12 (empty when it is one), prefixed by `field`. */
export const jsonSchemaProblems = (field: string, schema: Record<string, unknown> | null): Array<string> => {
  if (schema === null) return []
  try {
    if (!ajv.validateSchema(schema)) {
      return [`${field}: not a valid JSON Schema (draft 2020-12): ${ajv.errorsText(ajv.errors, { dataVar: field, separator: "; " })}`]
    }
    ajv.compile(schema)
    return []
  } catch (error) {
    return [`${field}: not a usable JSON Schema (draft 2020-12): ${error instanceof Error ? error.message : String(error)}`]
  } finally {
    ajv.removeSchema(schema)
  }
}
