/**
 * The handlers every group of the API is built with, kept as the router receives them, so the fast
 * lane (`fast-lane.ts`) runs the very same handler for an operation. A feature builds its group
 * with {@link serveGroup} exactly as with `HttpApiBuilder.group`; where the server provides
 * {@link ServedHandlers}, each handler is also noted there with the endpoint it serves, the
 * middleware in front of it and the services its group was built with.
 */
import { type HttpApi, HttpApiBuilder, type HttpApiEndpoint, type HttpApiGroup } from "@effect/platform"
import { Chunk, Context, Effect, Layer, Option } from "effect"

/** One endpoint's handler as its group built it. */
export interface ServedHandler {
  readonly endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
  /** The handler the router calls with `{ path, urlParams, payload, headers, request }`. */
  readonly handler: (request: Record<string, unknown>) => Effect.Effect<unknown, unknown, unknown>
  /** The services the group was built with (the router merges them in front of each request's). */
  readonly context: Context.Context<never>
  /** Keys of the middleware the router runs in front of it: the group's, then the endpoint's. */
  readonly middleware: ReadonlyArray<string>
  /** Whether the handler takes the raw request (`handleRaw`): its body is not decoded for it. */
  readonly raw: boolean
  readonly uninterruptible: boolean
}

/** Where the server keeps its groups' handlers (one list per server). */
export class ServedHandlers extends Context.Tag("svc/ServedHandlers")<ServedHandlers, Array<ServedHandler>>() {
  /** A new, empty list. */
  static readonly Live = Layer.sync(ServedHandlers, () => [])
}

interface BuiltHandlers {
  readonly group: HttpApiGroup.HttpApiGroup.AnyWithProps
  readonly handlers: Chunk.Chunk<{
    readonly endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
    readonly handler: ServedHandler["handler"]
    readonly withFullRequest: boolean
    readonly uninterruptible: boolean
  }>
}

const keysOf = (middlewares: ReadonlySet<{ readonly key: string }>) => Array.from(middlewares, (tag) => tag.key)

/** `HttpApiBuilder.group`, noting the group's handlers in {@link ServedHandlers} when the server provides it. */
export const serveGroup: typeof HttpApiBuilder.group = ((api: HttpApi.HttpApi.Any, groupName: string, build: (handlers: unknown) => unknown) =>
  HttpApiBuilder.group(api as never, groupName as never, ((handlers: unknown) =>
    Effect.gen(function* () {
      const made = build(handlers)
      const built = (Effect.isEffect(made) ? yield* made : made) as BuiltHandlers
      const served = yield* Effect.serviceOption(ServedHandlers)
      if (Option.isSome(served)) {
        const context = yield* Effect.context<never>()
        const groupMiddleware = keysOf(built.group.middlewares as ReadonlySet<{ readonly key: string }>)
        for (const item of Chunk.toReadonlyArray(built.handlers)) {
          served.value.push({
            endpoint: item.endpoint,
            handler: item.handler,
            context,
            middleware: [...groupMiddleware, ...keysOf(item.endpoint.middlewares as ReadonlySet<{ readonly key: string }>)],
            raw: item.withFullRequest,
            uninterruptible: item.uninterruptible
          })
        }
      }
      return built
    })) as never)) as unknown as typeof HttpApiBuilder.group
