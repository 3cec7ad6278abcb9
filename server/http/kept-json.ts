/**
 * A success schema for answers that are kept and asked for again (a listing page kept until
 * anything commits): each value is encoded by the declared schema the first time it is answered,
 * and the JSON text of that very (immutable) value is reused after. The OpenAPI description is the
 * declared schema's own.
 */
import { HttpApiSchema } from "@effect/platform"
import { Effect, Option, ParseResult, Schema, SchemaAST } from "effect"

/** `schema`, answered as JSON text kept per value. Values must not change once answered. */
export const KeptJson = <A extends object, I>(schema: Schema.Schema<A, I, never>): Schema.Schema<A, string, never> => {
  const texts = new WeakMap<object, string>()
  const encode = ParseResult.encodeUnknown(schema)
  const decode = ParseResult.decodeUnknown(Schema.parseJson(schema))
  return Schema.declare<A, string, []>(
    [],
    {
      decode: () => (input, options) => decode(input, options),
      encode: () => (input, options, ast) => {
        if (typeof input !== "object" || input === null) return ParseResult.fail(new ParseResult.Type(ast, input))
        const text = texts.get(input)
        if (text !== undefined) return ParseResult.succeed(text)
        return Effect.map(encode(input, options), (encoded) => {
          const json = JSON.stringify(encoded)
          texts.set(input, json)
          return json
        })
      }
    },
    {
      // Set here, not by a later `.annotations`, which would drop the identifiers.
      ...Option.match(SchemaAST.getIdentifierAnnotation(schema.ast), { onNone: () => ({}), onSome: (identifier) => ({ identifier }) }),
      [SchemaAST.SurrogateAnnotationId]: schema.ast,
      [HttpApiSchema.AnnotationEncoding]: { kind: "Text", contentType: "application/json" } satisfies HttpApiSchema.Encoding
    }
  )
}
