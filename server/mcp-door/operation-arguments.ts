/**
 * Tool arguments taken from the operation a tool mirrors: the zod schema the MCP SDK validates and
 * publishes is built from the JSON Schema of the operation's own input (generated from its Effect
 * Schema), so a bound changed in a domain module changes the tool too. Only the shape and the
 * bounds are carried over (types, lengths, ranges, item counts, enumerations, constants, nullability,
 * required properties); patterns, formats and messages stay with the operation's schema, which the
 * tool's handler decodes its body with (so such refusals keep REST's `invalid_request` wording).
 */
import type { Schema } from "effect"
import * as z from "zod/v4"
import { pageSize } from "../platform/pagination.js"
import { fieldsOf, type JsonSchema, type Operation } from "./operation.js"

const isNullSchema = (schema: JsonSchema): boolean => schema["type"] === "null" || (Array.isArray(schema["enum"]) && schema["enum"].length === 1 && schema["enum"][0] === null)

/** The single literal a schema allows (`{const}` or a one-value `enum`), if it is one. */
const literalOf = (schema: JsonSchema): { readonly value: string | number | boolean } | null => {
  if (schema["const"] !== undefined) return { value: schema["const"] }
  if (Array.isArray(schema["enum"]) && schema["enum"].length === 1) return { value: schema["enum"][0] }
  return null
}

/** The property every member of a union of objects fixes to a literal, if there is one. */
const discriminatorOf = (members: ReadonlyArray<JsonSchema>): string | null => {
  const first = members[0]?.["properties"] as JsonSchema | undefined
  if (first === undefined || members.some((member) => member["type"] !== "object")) return null
  return (
    Object.keys(first).find((key) =>
      members.every((member) => {
        const property = (member["properties"] as JsonSchema | undefined)?.[key] as JsonSchema | undefined
        return property !== undefined && literalOf(property) !== null && (member["required"] ?? []).includes(key)
      })
    ) ?? null
  )
}

const withLengths = (schema: JsonSchema): z.ZodType => {
  let string = z.string()
  if (typeof schema["minLength"] === "number") string = string.min(schema["minLength"])
  if (typeof schema["maxLength"] === "number") string = string.max(schema["maxLength"])
  return string
}

const withRange = (schema: JsonSchema): z.ZodType => {
  let number = z.number()
  if (schema["type"] === "integer") number = number.int()
  if (typeof schema["minimum"] === "number") number = number.min(schema["minimum"])
  if (typeof schema["maximum"] === "number") number = number.max(schema["maximum"])
  if (typeof schema["exclusiveMinimum"] === "number") number = number.gt(schema["exclusiveMinimum"])
  if (typeof schema["exclusiveMaximum"] === "number") number = number.lt(schema["exclusiveMaximum"])
  return number
}

const withCounts = (schema: JsonSchema): z.ZodType => {
  let array = z.array(zodOfJsonSchema((schema["items"] ?? {}) as JsonSchema))
  if (typeof schema["minItems"] === "number") array = array.min(schema["minItems"])
  if (typeof schema["maxItems"] === "number") array = array.max(schema["maxItems"])
  return array
}

const objectOf = (schema: JsonSchema): z.ZodType => {
  const properties = schema["properties"] as JsonSchema | undefined
  if (properties === undefined || Object.keys(properties).length === 0) return z.record(z.string(), z.unknown())
  const required = new Set<string>(schema["required"] ?? [])
  return z.object(
    Object.fromEntries(
      Object.entries(properties).map(([name, property]) => {
        const type = zodOfJsonSchema(property as JsonSchema)
        return [name, required.has(name) ? type : type.optional()]
      })
    )
  )
}

const unionOf = (members: ReadonlyArray<JsonSchema>): z.ZodType => {
  const present = members.filter((member) => !isNullSchema(member))
  const nullable = present.length < members.length
  let type: z.ZodType
  const literals = present.map(literalOf)
  if (present.length === 1) type = zodOfJsonSchema(present[0]!)
  else if (literals.every((literal) => literal !== null && typeof literal.value === "string")) {
    type = z.enum(literals.map((literal) => literal!.value as string) as [string, ...Array<string>])
  } else {
    const discriminator = discriminatorOf(present)
    const options = present.map(zodOfJsonSchema)
    type =
      discriminator === null
        ? z.union(options as [z.ZodType, z.ZodType, ...Array<z.ZodType>])
        : z.discriminatedUnion(discriminator, options as unknown as [z.ZodObject, ...Array<z.ZodObject>])
  }
  return nullable ? type.nullable() : type
}

/** The zod schema of a JSON Schema's shape and bounds (see the module's description for what is kept). */
export const zodOfJsonSchema = (schema: JsonSchema): z.ZodType => {
  const members = (schema["anyOf"] ?? schema["oneOf"]) as ReadonlyArray<JsonSchema> | undefined
  if (members !== undefined) return unionOf(members)
  const literal = literalOf(schema)
  if (literal !== null) return z.literal(literal.value)
  if (Array.isArray(schema["enum"])) {
    const values = schema["enum"] as ReadonlyArray<unknown>
    const named = values.filter((value): value is string => typeof value === "string")
    const type = z.enum(named as [string, ...Array<string>])
    return values.includes(null) ? type.nullable() : type
  }
  if (Array.isArray(schema["type"])) return unionOf(schema["type"].map((type: string) => ({ ...schema, type })))
  switch (schema["type"]) {
    case "string":
      return withLengths(schema)
    case "integer":
    case "number":
      return withRange(schema)
    case "boolean":
      return z.boolean()
    case "null":
      return z.null()
    case "array":
      return withCounts(schema)
    case "object":
      return objectOf(schema)
    default:
      return z.unknown()
  }
}

/**
 * The argument `name` as `mirrored` takes it (its JSON Schema's shape and bounds), required as the
 * operation requires nothing about it: the tool adds `.optional()` or `.describe()` as it needs.
 * Throws at start-up when the operation has no such input, so a renamed field cannot go unnoticed.
 */
export const operationArgument = <Inputs, const Name extends keyof Inputs & string>(
  mirrored: Operation<Inputs>,
  name: Name
): z.ZodType<Exclude<Inputs[Name], undefined>> => {
  const schema = mirrored.inputs.get(name)
  if (schema === undefined) throw new Error(`${mirrored.name} takes no input '${name}'; declare the argument as the tool's own.`)
  return zodOfJsonSchema(schema) as z.ZodType<Exclude<Inputs[Name], undefined>>
}

/**
 * The argument `name` as a shared schema of the contract takes it (the list parameters every list
 * takes, for a tool without a REST twin that pages the same way).
 */
export const schemaArgument = (schema: Schema.Schema.All, name: string): z.ZodType => {
  const found = fieldsOf(schema).find(([field]) => field === name)
  if (found === undefined) throw new Error(`The schema has no field '${name}'.`)
  return zodOfJsonSchema(found[1])
}

/** `limit` and `cursor` of a list operation, as the operation bounds them. */
export const listArguments = (mirrored: Operation<{ readonly limit?: number | undefined; readonly cursor?: string | undefined }>) => ({
  limit: operationArgument(mirrored, "limit").optional().describe(`Page size, 1 to ${pageSize.max} (default ${pageSize.default}).`),
  cursor: operationArgument(mirrored, "cursor").optional().describe("The `nextCursor` of the previous page; opaque.")
})

/**
 * A list argument of ids or exact names (resolved to ids by the tool): each a non-empty string, as
 * many as the operation's list takes (its `minItems` and `maxItems`).
 */
export const idsOrNamesArgument = <Inputs, const Name extends keyof Inputs & string>(mirrored: Operation<Inputs>, name: Name): z.ZodArray<z.ZodString> => {
  const schema = mirrored.inputs.get(name)
  if (schema === undefined || schema["type"] !== "array") throw new Error(`${mirrored.name} takes no list '${name}'.`)
  let list = z.array(z.string().min(1))
  if (typeof schema["minItems"] === "number") list = list.min(schema["minItems"])
  if (typeof schema["maxItems"] === "number") list = list.max(schema["maxItems"])
  return list
}
