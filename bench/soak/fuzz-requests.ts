/**
 * The fuzz part's requests: for one operation of the document, a fast-check arbitrary of whole
 * HTTP requests: path ids real or odd, query parameters of the right and wrong kinds (bad cursors
 * and limits, unknown and repeated ones), bodies from the request schema with broken parts, bad
 * JSON, wrong content types, odd methods, missing and wrong keys.
 */
import fc from "fast-check"
import { apiRoot, type Operation, slotKind } from "./document.js"
import type { SoakRequest } from "./http.js"
import { multipartBodies } from "./fuzz-multipart.js"
import type { SeededIds } from "./seed.js"
import { fromSchema, oddString, rarely, type SchemaContext } from "./schema-arbitrary.js"

/** What the requests are made from. */
export interface FuzzContext extends SchemaContext {
  /** Keys of the calling organization (organization and personal) and of the other one. */
  readonly keys: { readonly own: ReadonlyArray<string>; readonly other: string }
  /** The calling organization's objects, for the path ids. */
  readonly own: SeededIds
}

/** Percent-encodes the UTF-8 bytes of `text` (lone surrogates too, as U+FFFD), like a client that never throws. */
export const percentEncode = (text: string): string =>
  [...Buffer.from(text, "utf8")].map((byte) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`)).join("")

const oddMethods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "PROPFIND", "PURGE", "CONNECT-ME"]

const pathValue = (context: FuzzContext, own: string): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: fc.constant(own), weight: 24 },
    { arbitrary: fc.constantFrom(...context.ids), weight: 2 },
    { arbitrary: fc.uuid(), weight: 2 },
    { arbitrary: fc.constantFrom("all", "not-a-uuid", "..", ".", "%00", "%2F", "%ZZ", "00000000-0000-0000-0000-000000000000"), weight: 2 },
    // Raw odd segments (not percent-encoded): a `;` (which routers may read as a query), `~`, an empty segment.
    { arbitrary: fc.constantFrom(";x=1", "x;y", ";", "~", "", "a;b=c;d"), weight: 1 },
    { arbitrary: oddString.map((s) => percentEncode(s.slice(0, 3_000))), weight: 1 }
  )

const queryValue = (name: string, schema: any, context: FuzzContext): fc.Arbitrary<string> => {
  const typical: Record<string, fc.Arbitrary<string>> = {
    limit: fc.constantFrom("1", "2", "50", "100", "0", "-1", "101", "abc", "1e2", "", "1.5", "99999999999999999999", " 5"),
    cursor: fc.oneof(fc.base64String({ maxLength: 80 }), fc.constantFrom("", "junk", "eyJ9", "e30", "eyJvIjoxfQ"), fc.string({ maxLength: 40 })),
    fields: fc.array(fc.constantFrom("id", "name", "title", "published", "status", "nope", "", "path", "memberCount"), { maxLength: 4 }).map((f) => f.join(",")),
    updatedSince: fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.constantFrom("yesterday", "2026-13-40T00:00:00Z", "", "0")),
    since: fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.constantFrom("never", "", "1")),
    depth: fc.constantFrom("1", "2", "0", "-1", "100", "x"),
    include: fc.constantFrom("drafts", "all", "", "drafts,drafts"),
    view: fc.constantFrom("summary", "full", "", "x"),
    email: fc.oneof(fc.emailAddress(), fc.constantFrom("", "@", "a@b"))
  }
  const typed = typical[name] ?? fromSchema({ ...context, breakRate: 0 }, schema ?? { type: "string" }).map((v) => String(v))
  return fc.oneof({ arbitrary: typed, weight: 5 }, { arbitrary: oddString.map((s) => s.slice(0, 2_000)), weight: 1 })
}

const query = (op: Operation, context: FuzzContext): fc.Arbitrary<string> => {
  const params = ((op.operation.parameters ?? []) as Array<any>).filter((p) => p.in === "query")
  const pairs = fc.tuple(
    ...params.map((p) => rarely(queryValue(p.name, p.schema, context).map((v) => [p.name as string, v] as const), 2)),
    rarely(fc.tuple(fc.constantFrom("unknown", "limit", "cursor", "__proto__", "a[b]", ""), oddString.map((s) => s.slice(0, 100))), 6)
  )
  return pairs.map((list) => {
    const present = list.filter((pair): pair is readonly [string, string] => pair !== null)
    return present.length === 0 ? "" : `?${present.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join("&")}`
  })
}

/** A body as it goes on the wire, with the content type it claims. */
interface Encoded {
  readonly contentType: string | undefined
  readonly body: string | Uint8Array | undefined
}

const encodings = (value: unknown): fc.Arbitrary<Encoded> => {
  const json = JSON.stringify(value) ?? "null"
  return fc.oneof(
    { arbitrary: fc.constant({ contentType: "application/json", body: json }), weight: 24 },
    { arbitrary: fc.integer({ min: 0, max: Math.max(0, json.length - 1) }).map((cut) => ({ contentType: "application/json", body: json.slice(0, cut) })), weight: 2 },
    { arbitrary: fc.constantFrom("{", "[", "nul", "{\"a\":1}{", "\u0000", "{\"name\":\"\\ud800\"}", "1", "\"text\"", "{\"a\":1,}", "\uFEFF{}").map((body) => ({ contentType: "application/json", body })), weight: 2 },
    { arbitrary: fc.constantFrom("text/plain", "application/xml", "application/x-www-form-urlencoded", "application/json; charset=latin1", "APPLICATION/JSON", "application/json;;", "*/*", "").map((contentType) => ({ contentType, body: json })), weight: 2 },
    { arbitrary: fc.constantFrom("multipart/form-data", "multipart/form-data; boundary=xyz", "multipart/form-data; boundary=").map((contentType) => ({ contentType, body: `--xyz\r\nContent-Disposition: form-data; name="name"\r\n\r\n${json.slice(0, 50)}\r\n--xyz--\r\n` })), weight: 1 },
    { arbitrary: fc.constant({ contentType: undefined, body: json }), weight: 1 },
    { arbitrary: fc.constant({ contentType: "application/json", body: undefined }), weight: 1 }
  )
}

/** The arbitrary of requests against `op`. */
export const requestsOf = (op: Operation, context: FuzzContext): fc.Arbitrary<SoakRequest> => {
  const pathParams = fc.tuple(...op.params.map((param) => pathValue(context, context.own[slotKind(op.template, param)])))
  const content = op.operation.requestBody?.content ?? {}
  const schema = content["application/json"]?.schema
  const json: fc.Arbitrary<Encoded | null> = schema
    ? fromSchema(context, schema).chain(encodings)
    : rarely(fc.jsonValue({ maxDepth: 2 }).chain(encodings), 10)
  const body: fc.Arbitrary<Encoded | null> =
    "multipart/form-data" in content ? fc.oneof({ arbitrary: json, weight: 1 }, { arbitrary: multipartBodies(context.ids), weight: 1 }) : json
  const method = fc.oneof({ arbitrary: fc.constant(op.method), weight: 30 }, { arbitrary: fc.constantFrom(...oddMethods), weight: 1 })
  const authorization = fc.oneof(
    { arbitrary: fc.constantFrom(...context.keys.own).map((key) => `Bearer ${key}`), weight: 30 },
    { arbitrary: fc.constant(`Bearer ${context.keys.other}`), weight: 1 },
    { arbitrary: fc.constantFrom(undefined, "", "Bearer", "Bearer svco_nope", "Basic dXNlcjpwYXNz", "bearer  x y", `Bearer ${"k".repeat(5_000)}`), weight: 2 }
  )
  const idempotency = rarely(fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom("", " ", "k".repeat(300), "ü")), 8)
  return fc.tuple(method, pathParams, query(op, context), body, authorization, idempotency).map(([m, ids, q, encoded, auth, key]) => {
    let i = 0
    const path = apiRoot + op.template.replace(/\{\w+\}/g, () => ids[i++] ?? "x") + q
    const headers: Record<string, string> = {}
    if (auth !== undefined) headers.authorization = auth
    if (key !== null) headers["idempotency-key"] = percentEncode(key)
    if (encoded?.contentType !== undefined && encoded.body !== undefined) headers["content-type"] = encoded.contentType
    return { method: m, path, headers, body: encoded?.body }
  })
}
