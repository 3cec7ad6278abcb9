/**
 * Final touches on the generated OpenAPI description: our error envelope replaces the framework's
 * decode-error shape, and the headers every response carries are documented.
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
  for (const pathItem of Object.values(out.paths ?? {}) as Array<Json>) {
    for (const operation of Object.values(pathItem) as Array<Json>) {
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
  }
  return out
}
