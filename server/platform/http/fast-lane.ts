/**
 * The fast lane: a front branch (`front-branch.ts`) that runs the API's own routes straight from
 * Node's request, without Effect's HTTP server, the router's dispatch and the HttpApp middleware
 * stack around them, which cost several times what most operations cost themselves.
 *
 * It serves every operation alike. What it runs is the route the router runs for the request
 * (`HttpApiBuilder.Router`): the endpoint's authentication middleware (the one admission,
 * `platform/admission.ts`), its decoding, its handler and its encoding. Around the route it does
 * what the API's middleware does (`request-middleware.ts`): every failure and defect turned into
 * the envelope, the pre-response handlers a handler added, and the `X-Request-Id` the request's
 * intake gave it (`request-intake.ts`, which also brought the data version up to date). It leaves a request to the router by its shape alone, before reading it:
 * - a target that is not a plain operation path (escapes, dot segments, trailing or double
 *   slashes), a method or path of no operation, or a query or header the operation refuses as it
 *   stands (`routedShapeProblem`);
 * - a body it cannot read whole as JSON: without `Content-Length`, chunked, over the size limit,
 *   of a media type other than `application/json`, or sent where the operation takes none.
 */
import { HttpApiBuilder, HttpApp, HttpRouter, HttpServerError, HttpServerRequest, HttpServerRespondable, type HttpServerResponse } from "@effect/platform"
import { Context, Effect, Exit, FiberRef, Layer, Runtime } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { errorResponse } from "./error-responses.js"
import type { FrontBranches } from "./front-branch.js"
import { LaneRequest } from "./lane-request.js"
import { maxRequestBodyBytes } from "./limits.js"
import { isJsonMediaType, parseMediaType } from "./media-type.js"
import { sendResponse } from "./node-response.js"
import { requestIdOf } from "./request-intake.js"
import { toApiFailure } from "./request-middleware.js"
import { type OperationShapes, operationOf, queryRecord, requestDecodes, routedShapeProblem } from "./request-shape.js"
import { plainRequestPath } from "./request-url.js"

type AnyRoute = HttpRouter.Route<unknown, unknown>

/** What the lane did with a request it took (it answers every one it takes). */
export type FastLaneOutcome = "served"

/** How a server runs its fast lane. */
export interface FastLaneOptions {
  /** Off: every request goes through the API's router (comparisons, tests); on by default. */
  readonly enabled?: boolean | undefined
  /** Told of every request the lane answered (tests). */
  readonly observe?: ((outcome: FastLaneOutcome, method: string, path: string) => void) | undefined
}

/** A request the lane takes: its route, its path parameters and its target. */
interface Taken {
  readonly route: AnyRoute
  readonly params: Readonly<Record<string, string>>
  readonly target: string
  readonly takesBody: boolean
}

const emptyBody = Buffer.alloc(0)
const methods = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"])

/** Reads the whole body (its `Content-Length` was checked against the limit before). */
const readBody = (request: IncomingMessage, onBody: (body: Buffer) => void, onError: () => void) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => void chunks.push(chunk))
  request.once("end", () => onBody(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
  request.once("error", onError)
}

/**
 * The lane, in front of the API on `front` for as long as the layer lives, running the routes the
 * API's groups added to `HttpApiBuilder.Router` (the same router the API serves, built in the same
 * layer graph), for the operations `shapes` describes.
 */
export const FastLaneLive = (options: {
  readonly front: FrontBranches
  readonly shapes: OperationShapes
  readonly observe?: FastLaneOptions["observe"]
}): Layer.Layer<never> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const runtime = yield* Effect.runtime<never>()
      const runFork = Runtime.runFork(runtime)
      const router = yield* HttpApiBuilder.Router
      const { shapes } = options

      /** The routes by `METHOD /path`, read once the API's groups have all added theirs (at the first request). */
      let routes: ReadonlyMap<string, AnyRoute> | undefined
      const routeOf = (key: string) => {
        routes ??= new Map(
          Array.from(Runtime.runSync(runtime)(router.router).routes, (route) => [`${route.method} ${route.path}`, route as AnyRoute] as const)
        )
        return routes.get(key)
      }

      /** The route, path parameters and target of a request the lane takes, from its line and headers alone; null for the API. */
      const take = (request: IncomingMessage): Taken | null => {
        const target = request.url
        const method = request.method
        if (target === undefined || method === undefined || !methods.has(method)) return null
        const path = plainRequestPath(target)
        if (path === null || path.endsWith("/") || path.includes("//")) return null
        const segments = path.split("/").filter((segment) => segment.length > 0)
        const shape = operationOf(shapes, method, segments)
        if (shape === undefined) return null
        const route = routeOf(`${shape.method} ${shape.path}`)
        if (route === undefined) return null
        const headers = request.headers
        if (routedShapeProblem(shape, { method, url: target, headers }) !== undefined) return null
        if (headers["transfer-encoding"] !== undefined) return null
        const declared = headers["content-length"]
        const takesBody = shape.bodyTypes.length > 0
        if (takesBody) {
          if (declared === undefined || !(Number(declared) <= maxRequestBodyBytes)) return null
          const media = parseMediaType(headers["content-type"] ?? "")
          if (media === null || !isJsonMediaType(media) || media.essence !== "application/json") return null
        } else if (declared !== undefined && declared !== "0") return null
        const params: Record<string, string> = {}
        let parameter = 0
        shape.segments.forEach((segment, index) => {
          if (segment === null) params[shape.parameterNames[parameter++]!] = segments[index]!
        })
        return { route, params, target, takesBody }
      }

      /** The route's answer to `request`, or the envelope of its failure, with any pre-response handler applied. */
      const answer = (taken: Taken, request: LaneRequest, requestId: string): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
        const context = Context.make(HttpServerRequest.HttpServerRequest, request).pipe(
          Context.add(HttpRouter.RouteContext, { [HttpRouter.RouteContextTypeId]: HttpRouter.RouteContextTypeId, params: taken.params, route: taken.route }),
          Context.add(HttpServerRequest.ParsedSearchParams, queryRecord(taken.target))
        )
        const handled = (taken.route.handler as Effect.Effect<HttpServerRespondable.Respondable, unknown, never>).pipe(
          Effect.flatMap(HttpServerRespondable.toResponse),
          Effect.catchAllCause((cause) => Effect.map(toApiFailure(cause, requestId, requestDecodes(shapes, request)), errorResponse)),
          Effect.flatMap((response) =>
            Effect.flatMap(FiberRef.get(HttpApp.currentPreResponseHandlers), (handler) =>
              handler._tag === "None" ? Effect.succeed(response) : Effect.orDie(handler.value(request, response))
            )
          ),
          Effect.provide(context)
        )
        return taken.route.uninterruptible ? Effect.uninterruptible(handled) : handled
      }

      /** Runs the route of a request the lane took, once its body (if any) was read, and sends its answer. */
      const serve = (incoming: IncomingMessage, response: ServerResponse, taken: Taken, body: Buffer) => {
        const requestId = requestIdOf(incoming)
        const request = new LaneRequest(incoming, body, taken.target)
        const fiber = runFork(Effect.scoped(Effect.flatMap(answer(taken, request, requestId), (answered) => sendResponse(answered, response, { "x-request-id": requestId }))))
        response.on("close", () => {
          if (!response.writableEnded) fiber.unsafeInterruptAsFork(HttpServerError.clientAbortFiberId)
        })
        fiber.addObserver((exit) => {
          if (Exit.isFailure(exit)) return void response.destroy()
          options.observe?.("served", incoming.method ?? "", taken.route.path)
        })
      }

      const branch = (request: IncomingMessage, response: ServerResponse): boolean => {
        const taken = take(request)
        if (taken === null) return false
        if (!taken.takesBody) serve(request, response, taken, emptyBody)
        else readBody(request, (body) => serve(request, response, taken, body), () => response.destroy())
        return true
      }

      const remove = options.front.add(branch)
      yield* Effect.addFinalizer(() => Effect.sync(remove))
    })
  ).pipe(Layer.provide(HttpApiBuilder.Router.Live))
