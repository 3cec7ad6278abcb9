/**
 * fast-check arbitraries from the JSON Schemas of an OpenAPI document: values that mostly follow
 * the schema (so requests reach the handlers) with, at every level, a chance of a value that does
 * not (wrong types, missing and unknown fields, huge and odd strings, unicode).
 */
import fc from "fast-check"

/** `arbitrary` once in `oneIn` draws, else null. */
export const rarely = <T>(arbitrary: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | null> =>
  fc.oneof({ arbitrary: fc.constant(null), weight: oneIn - 1 }, { arbitrary, weight: 1 })

/** Strings that have broken servers before. */
const oddStrings = [
  "", " ", "\u0000", "\uD800", "\uDFFF", "\u202Eevil", "😀".repeat(300), "a\r\nX-Injected: 1", "../../etc/passwd", "%00", "%",
  "' OR 1=1 --", "\"; DROP TABLE pages; --", "<script>alert(1)</script>", "{{#each}}", "{{", "$where", "__proto__",
  "constructor", "NaN", "-0", "1e309", "9007199254740993", "null", "undefined", "true", "[]", "{}", "\\", "\t\t", "ᚠᛇᚻ",
  "ﷺ", "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǫ̗", "\u0085\u2028\u2029", "*", "\"", "AND", "NEAR(", "OR", "\"unterminated", "a*b\"c(d)", "^", "-", "+"
]

/** An odd string: the list above, random unicode, control characters, or a long one. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...oddStrings), weight: 4 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 60 }), weight: 3 },
  { arbitrary: fc.string({ unit: "grapheme", maxLength: 60 }), weight: 2 },
  { arbitrary: fc.integer({ min: 1_000, max: 300_000 }).map((n) => "x".repeat(n)), weight: 1 }
)

/** A JSON value of the wrong kind for most schemas. */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.constantFrom(-1, 0, 1.5, 1e308, -1e308, 2 ** 53 + 2, Number.MIN_VALUE),
  oddString,
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  fc.integer({ min: 1, max: 2_000 }).map((n) => Array.from({ length: n }, (_, i) => i))
)

/** How schemas are turned into arbitraries: the document (for `$ref`) and strings to use for ids. */
export interface SchemaContext {
  readonly doc: any
  /** Ids worth sending where a uuid is expected (real ones reach deeper). */
  readonly ids: ReadonlyArray<string>
  /** 0..1: the chance, at each level, of a value that breaks the schema. */
  readonly breakRate: number
}

const resolve = (context: SchemaContext, schema: any): any => {
  let current = schema
  for (let hops = 0; current && typeof current.$ref === "string" && hops < 20; hops++) {
    const path = current.$ref.replace(/^#\//, "").split("/")
    current = path.reduce((node: any, part: string) => node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")], context.doc)
  }
  return current ?? {}
}

const stringOf = (context: SchemaContext, schema: any): fc.Arbitrary<string> => {
  if (schema.format === "uuid" || /uuid|[0-9a-f]\{8\}/i.test(String(schema.pattern ?? "")) || /id$/i.test(String(schema.title ?? "")))
    return fc.oneof({ arbitrary: fc.constantFrom(...context.ids), weight: 4 }, { arbitrary: fc.uuid(), weight: 1 })
  if (schema.format === "date-time") return fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString())
  if (schema.format === "email") return fc.emailAddress()
  const minLength = Number(schema.minLength ?? 0)
  const maxLength = Math.min(Number(schema.maxLength ?? 60), Math.max(minLength, 60))
  return fc.string({ unit: "grapheme", minLength, maxLength })
}

const depthLimit = 6

/** An arbitrary of the values of `schema` (with the context's share of broken ones). */
export const fromSchema = (context: SchemaContext, input: any, depth = 0): fc.Arbitrary<unknown> => {
  const valid = validFrom(context, resolve(context, input), depth)
  if (context.breakRate <= 0) return valid
  const broken = Math.max(1, Math.round(context.breakRate * 100))
  return fc.oneof({ arbitrary: valid, weight: 100 - broken }, { arbitrary: wrongValue, weight: broken })
}

const validFrom = (context: SchemaContext, schema: any, depth: number): fc.Arbitrary<unknown> => {
  if (depth > depthLimit) return fc.constant(null)
  if ("const" in schema) return fc.constant(schema.const)
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as Array<unknown>))
  const alternatives = schema.anyOf ?? schema.oneOf
  if (Array.isArray(alternatives) && alternatives.length > 0) {
    return fc.oneof(...alternatives.map((alternative: any) => fromSchema(context, alternative, depth + 1)))
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) return fromSchema(context, schema.allOf[0], depth + 1)
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case "object":
      return objectFrom(context, schema, depth)
    case "array": {
      const maxLength = Math.min(Number(schema.maxItems ?? 4), 4)
      const minLength = Math.min(Number(schema.minItems ?? 0), maxLength)
      return fc.array(fromSchema(context, schema.items ?? {}, depth + 1), { minLength, maxLength })
    }
    case "string":
      return stringOf(context, schema)
    case "integer":
      // unbounded integers are mostly counts and limits: small ones reach the handler, wrongValue the rest
      return fc.integer({ min: Number(schema.minimum ?? 1), max: Number(schema.maximum ?? 100) })
    case "number":
      return fc.double({ min: Number(schema.minimum ?? -1e6), max: Number(schema.maximum ?? 1e6), noNaN: true })
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    default:
      return schema.properties ? objectFrom(context, schema, depth) : fc.jsonValue({ maxDepth: 2 })
  }
}

const objectFrom = (context: SchemaContext, schema: any, depth: number): fc.Arbitrary<unknown> => {
  const properties = Object.entries((schema.properties ?? {}) as Record<string, any>)
  const required = new Set<string>(schema.required ?? [])
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  // a cursor made up is only ever refused: the valid side leaves it out (wrong values still send one)
  for (const [name, property] of properties) if (name !== "cursor") model[name] = fromSchema(context, property, depth + 1)
  const record = fc.record(model, { requiredKeys: Object.keys(model).filter((name) => required.has(name)) })
  if (context.breakRate <= 0) return record
  return fc
    .tuple(
      record,
      rarely(fc.dictionary(fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom("__proto__", "constructor", "id")), wrongValue, { maxKeys: 2 }), 8),
      rarely(fc.constantFrom(...(required.size > 0 ? [...required] : ["-"])), 8)
    )
    .map(([value, unknown, dropped]) => {
      const out: Record<string, unknown> = { ...(value as object) }
      if (unknown) for (const [key, v] of Object.entries(unknown)) Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true })
      if (dropped) delete out[dropped]
      return out
    })
}
