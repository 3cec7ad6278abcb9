/**
 * Keyset pagination shared by every list (REST and MCP): opaque, tamper-evident cursors bound to
 * the list they came from, page sizes 1..200 (default 50), and `fields` projection.
 */
import { type Array as Arr, Effect, ParseResult, Schema, type SchemaAST } from "effect"
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { InvalidRequest } from "./errors.js"
import { Uuid } from "./schema.js"
import { ServerSettings } from "./settings-repo.js"

/** Default and largest page size. */
export const pageSize = { default: 50, max: 200 } as const

/** A position in a keyset order, e.g. `[createdAt, id]` of the last item served. */
export type Position = ReadonlyArray<string | number>

/** What a list call asks for. */
export interface PageRequest {
  readonly limit: number
  readonly after: Position | null
}

/** One page of a list. */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | null
}

/** The query parameters every list takes. */
export const ListParams = {
  limit: Schema.optional(
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, pageSize.max)).annotations({
      description: `Page size, 1 to ${pageSize.max} (default ${pageSize.default}).`,
      message: () => `limit must be a whole number from 1 to ${pageSize.max}`,
      jsonSchema: { type: "integer", minimum: 1, maximum: pageSize.max, default: pageSize.default }
    })
  ),
  cursor: Schema.optional(
    Schema.String.annotations({ description: "The `nextCursor` of the previous page; opaque." })
  )
}

/** The answer of every list (conventions: Shapes): `{ <plural>: [...], nextCursor }`. */
export const ListOf = <const Plural extends string, Item extends Schema.Schema.Any>(plural: Plural, item: Item) =>
  Schema.Struct({
    ...({ [plural]: Schema.Array(item) } as { readonly [K in Plural]: Schema.Array$<Item> }),
    nextCursor: Schema.NullOr(Schema.String).annotations({ description: "Pass as `cursor` for the next page; null on the last." })
  })

/** The query string of a list: `limit`, `cursor` and `extra` parameters; unknown parameters are refused. */
export const listQuery = <Fields extends Schema.Struct.Fields>(extra: Fields) =>
  Schema.Struct({ ...ListParams, ...extra }).annotations({ parseOptions: { onExcessProperty: "error", errors: "all" } })

/** `updatedSince`: an ISO 8601 date-time (any offset), normalized to UTC; inclusive. */
export const UpdatedSinceParam = Schema.optional(
  Schema.transformOrFail(Schema.String, Schema.String, {
    strict: true,
    decode: (text, _, ast) => {
      const ms = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text) ? Date.parse(text) : Number.NaN
      return Number.isNaN(ms)
        ? ParseResult.fail(new ParseResult.Type(ast, text, "must be an ISO 8601 date-time, such as 2026-01-31T09:00:00Z"))
        : ParseResult.succeed(new Date(ms).toISOString())
    },
    encode: ParseResult.succeed
  }).annotations({
    jsonSchema: { type: "string", format: "date-time", description: "Only items changed at or after this time (inclusive)." }
  })
)

/** An optional filter of a list by one of `literal`'s values; any other is refused naming them all. */
export const OneOfParam = <const Literals extends Arr.NonEmptyReadonlyArray<SchemaAST.LiteralValue>>(literal: Schema.Literal<Literals>) =>
  Schema.optional(literal.annotations({ message: () => `must be one of ${literal.literals.map((value) => `"${value}"`).join(", ")}` }))

/** An optional filter of a list by an item's UUID, named `name` in the refusal of anything else. */
export const UuidParam = (name: string) => Schema.optional(Uuid.annotations({ message: () => `${name} must be a UUID` }))

/** The `fields` query parameter. */
export const FieldsParam = Schema.optional(
  Schema.String.annotations({ description: "Comma-separated field names to return; unknown names are refused." })
)

const invalidCursor = () =>
  new InvalidRequest({ message: "cursor: not a cursor of this list; start again without a cursor." })

/** Signs and verifies cursors with a secret kept in the database. */
export class Cursors extends Effect.Service<Cursors>()("svc/Cursors", {
  effect: Effect.gen(function* () {
    const settings = yield* ServerSettings
    const secret = Buffer.from(
      yield* settings.settingOrInit("cursor_secret", () => randomBytes(32).toString("hex")),
      "hex"
    )
    const sign = (text: string) => createHmac("sha256", secret).update(text).digest().subarray(0, 16)

    /** A short fingerprint of the list a cursor belongs to (the signature binds it too). */
    const listTag = (list: string) => createHash("sha256").update(list).digest("base64url").slice(0, 12)

    const encode = (list: string, position: Position): string => {
      const payload = Buffer.from(JSON.stringify({ l: listTag(list), p: position })).toString("base64url")
      return `${payload}.${sign(`${list}\n${payload}`).toString("base64url")}`
    }

    const decode = (list: string, cursor: string): Effect.Effect<Position, InvalidRequest> =>
      Effect.suspend(() => {
        const [payload, mac, extra] = cursor.split(".")
        if (!payload || !mac || extra !== undefined) return Effect.fail(invalidCursor())
        const expected = Buffer.from(sign(`${list}\n${payload}`).toString("base64url"))
        const given = Buffer.from(mac)
        if (given.length !== expected.length || !timingSafeEqual(given, expected)) return Effect.fail(invalidCursor())
        try {
          const parsed = JSON.parse(Buffer.from(payload, "base64url").toString()) as { l: string; p: Position }
          return parsed.l === listTag(list) && Array.isArray(parsed.p) ? Effect.succeed(parsed.p) : Effect.fail(invalidCursor())
        } catch {
          return Effect.fail(invalidCursor())
        }
      })

    return {
      encode,
      /** Turns `limit`/`cursor` parameters into a page request for the list named `list`. */
      request: (list: string, params: { readonly limit?: number | undefined; readonly cursor?: string | undefined }) =>
        Effect.map(
          params.cursor === undefined ? Effect.succeed(null) : decode(list, params.cursor),
          (after): PageRequest => ({ limit: params.limit ?? pageSize.default, after })
        ),
      /**
       * Builds a page from `limit + 1` fetched rows: the extra row only says another page exists.
       */
      page: <A>(list: string, request: PageRequest, rows: ReadonlyArray<A>, positionOf: (item: A) => Position): Page<A> => {
        const items = rows.slice(0, request.limit)
        const last = items[items.length - 1]
        return {
          items,
          nextCursor: rows.length > request.limit && last !== undefined ? encode(list, positionOf(last)) : null
        }
      }
    }
  }),
  dependencies: [ServerSettings.Default]
}) {}

/** Parses `fields` against the names a list allows; `null` means every field. */
export const parseFields = (
  raw: string | undefined,
  allowed: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<string> | null, InvalidRequest> => {
  if (raw === undefined) return Effect.succeed(null)
  const names = raw
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name.length > 0)
  const unknown = names.filter((name) => !allowed.includes(name))
  if (names.length === 0 || unknown.length > 0) {
    return Effect.fail(
      new InvalidRequest({
        message: `fields: unknown field ${unknown.map((n) => `'${n}'`).join(", ") || "(none given)"}; allowed: ${allowed.join(", ")}.`
      })
    )
  }
  return Effect.succeed([...new Set(names)])
}

/** Keeps only `fields` of an object (all of it when `fields` is null). */
export const project = <A extends object>(item: A, fields: ReadonlyArray<string> | null): Partial<A> => {
  if (fields === null) return item
  const out: Record<string, unknown> = {}
  for (const name of fields) if (name in item) out[name] = (item as Record<string, unknown>)[name]
  return out as Partial<A>
}

/**
 * A list item as `fields` may narrow it: every property optional on the wire (all of them are
 * there when `fields` is not given), so that the declared schema holds for every answer.
 */
export const Narrowable = <A, I, R>(item: Schema.Schema<A, I, R>, identifier: string) =>
  Schema.partialWith(item, { exact: true }).annotations({
    identifier,
    description: "Every field, or only those named by `fields`."
  })
