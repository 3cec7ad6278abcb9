/**
 * Assembles the service: database, domain services, the HTTP API and its middleware, on a Node
 * HTTP server. `startServer` is what `svc serve` and the tests run.
 */
import { HttpApiBuilder, HttpMiddleware, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, type LogLevel, Scope } from "effect"
import { createServer } from "node:http"
import { Api, apiPrefix } from "./api.js"
import { requestArrivalMs } from "./http/limits.js"
import { openApiRoute } from "./http/openapi-route.js"
import { CoreLive, type CoreOptions } from "./core.js"
import { type DemoReport, seedDemoOnce } from "./demo/seed.js"
import { features } from "./features.js"
import { ActivityLog } from "./knowledge/activity/service.js"
import { CreditRenewalLive } from "./identity/credit-renewal.js"
import { AccountsService } from "./identity/service.js"
import { mergeLayers } from "./platform/feature.js"
import { AuthenticationLive } from "./http/authentication.js"
import { FastLaneLive, type FastLaneOptions } from "./http/fast-lane.js"
import { policyIndex } from "./http/policy.js"
import { operationShapes } from "./http/request-shape.js"
import { ServedHandlers } from "./http/served-groups.js"
import { dataVersionSyncOf } from "./http/data-version-sync.js"
import { type Backend, DatabaseBackend } from "./platform/sql/dialect.js"
import { McpBranchLive } from "./mcp/http.js"
import { McpSignInLive } from "./mcp/sign-in/feature.js"
import { OAuthHttpLive } from "./mcp/sign-in/http.js"
import { PortalHttpLive } from "./portal/http.js"
import { withFrontBranches } from "./http/front-branch.js"
import { originGuard } from "./http/origin-guard.js"
import { type OriginPolicy, originPolicy } from "./http/origin-policy.js"
import { guardedDoorOf } from "./origin-doors.js"
import { withProtocolErrorEnvelopes } from "./http/protocol-errors.js"
import { drainable } from "./http/drain.js"
import { intake } from "./http/request-intake.js"
import type { RequestLogOptions } from "./http/request-log.js"
import { BodySizeLimitLive, RequestMiddlewareLive } from "./http/request-middleware.js"
import { StderrLogger } from "./platform/logging.js"

/** How to run the server: the core options and how it listens, logs and starts. */
export interface ServerOptions extends CoreOptions {
  readonly host?: string | undefined
  readonly port?: number | undefined
  /** Least severe log level written to stderr. */
  readonly logLevel?: LogLevel.LogLevel | undefined
  /** Writes one line per request (`svc serve`); none when undefined. */
  readonly requestLog?: RequestLogOptions | undefined
  /** Seeds demo content into organization `default` unless it is there already (`svc serve --demo`). */
  readonly demo?: boolean | undefined
  /** How often the monthly credit renewal looks for due organizations, in milliseconds (a minute; tests shorten it). */
  readonly creditRenewalPollMs?: number | undefined
  /** Runs the background workers: ingestion, webhooks, mail, credit renewal (default true; tests of restarts start servers without them). */
  readonly ingestionWorker?: boolean | undefined
  /** The fast lane in front of the API (`server/http/fast-lane.ts`): on unless `enabled: false`. */
  readonly fastLane?: FastLaneOptions | undefined
  /** How long a request may take to arrive before a 408, in milliseconds (`requestArrivalMs`; tests shorten it). */
  readonly requestArrivalMs?: number | undefined
  /**
   * Browser origins allowed beside loopback ones and the server's own on the MCP, OAuth and Portal
   * addresses (`svc serve --allowed-origins`; `origin-policy.ts`). An entry that is not an origin
   * fails the start.
   */
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
}

/** A running server. */
export interface RunningServer {
  readonly origin: string
  readonly baseUrl: string
  readonly mcpUrl: string
  readonly dataDir: string
  readonly organization: { readonly id: string; readonly slug: string } | null
  /** The all-scopes key of the default organization, on the first start only. */
  readonly bootstrapKey: string | null
  /** With `demo`: the demo's ids, and whether this start seeded them; null without `demo`. */
  readonly demo: DemoReport | null
  /** Writes what background work still holds in memory (recent activity), as shutdown does. */
  readonly flush: () => Promise<void>
  /**
   * Stops accepting connections, lets the requests in flight finish (those queued for the database
   * included; `drain.ts`, at most `drainBoundMs`), then closes the database and the rest.
   */
  readonly close: () => Promise<void>
}


/**
 * The HTTP server: the origin guard first (`origin-guard.ts`, added before the layers add theirs),
 * then the MCP branch and the fast lane answer their requests straight from Node's request (in
 * front of everything else), then the API with its middleware and the Portal branch. Answers the
 * layer and the count of requests in flight that `close` drains.
 */
const HttpLive = (options: ServerOptions, backend: Backend, origins: OriginPolicy) => {
  const arrival = options.requestArrivalMs ?? requestArrivalMs
  const server = withProtocolErrorEnvelopes(
    createServer({ requestTimeout: arrival, connectionsCheckingInterval: Math.min(5_000, Math.max(100, Math.floor(arrival / 4))) })
  )
  const sync = dataVersionSyncOf(backend)
  const front = withFrontBranches(server, (request, response) => intake(request, response, options.requestLog, sync))
  front.add(originGuard(origins, guardedDoorOf))
  const requests = drainable(server)
  const layer = HttpApiBuilder.serve().pipe(
    HttpMiddleware.withTracerDisabledWhen(() => true),
    Layer.provide(McpBranchLive(front)),
    Layer.provide(
      options.fastLane?.enabled === false
        ? Layer.empty
        : FastLaneLive({ front, shapes: operationShapes(Api), policies: policyIndex(Api), observe: options.fastLane?.observe })
    ),
    Layer.provide(OAuthHttpLive),
    Layer.provide(PortalHttpLive),
    Layer.provide(BodySizeLimitLive),
    Layer.provide(RequestMiddlewareLive),
    Layer.provide(openApiRoute(`${apiPrefix}/openapi.json`)),
    Layer.provide(
      HttpApiBuilder.api(Api).pipe(
        Layer.provide(mergeLayers(features.map((feature) => feature.http))),
        Layer.provide(AuthenticationLive(Api))
      )
    ),
    Layer.provideMerge(NodeHttpServer.layer(() => server, { port: options.port ?? 8787, host: options.host ?? "127.0.0.1" })),
    Layer.provide(ServedHandlers.Live)
  )
  return { layer, requests }
}

/** Starts the whole service and resolves once it accepts connections. */
export const startServer = async (options: ServerOptions): Promise<RunningServer> => {
  const origins = originPolicy(options.host, options.allowedOrigins ?? [])
  const scope = Effect.runSync(Scope.make())
  try {
    // No tracer is exported, so spans (one per request, one per query) would only cost time.
    const logger = Layer.merge(StderrLogger(options.logLevel), Layer.setTracerEnabled(false))
    const core = await Effect.runPromise(Layer.buildWithScope(Layer.provideMerge(CoreLive(options), logger), scope))
    const boot = await Effect.runPromise(
      Effect.gen(function* () {
        const accounts = yield* AccountsService
        const made = yield* accounts.bootstrap
        const org = made?.organization ?? (yield* accounts.defaultOrganization)
        return { secret: made?.secret ?? null, organization: org ? { id: org.id, slug: org.slug } : null }
      }).pipe(Effect.provide(core))
    )
    if (options.ingestionWorker !== false) {
      await Effect.runPromise(
        Layer.buildWithScope(Layer.merge(mergeLayers(features.map((feature) => feature.workers)), CreditRenewalLive(options.creditRenewalPollMs)).pipe(Layer.provide(Layer.succeedContext(core)), Layer.provide(logger)), scope)
      )
    }
    const demo = options.demo ? await Effect.runPromise(seedDemoOnce(boot.secret).pipe(Effect.provide(core))) : null
    const served = HttpLive(options, Context.get(core, DatabaseBackend), origins)
    const http = await Effect.runPromise(
      Layer.buildWithScope(served.layer.pipe(Layer.provide(McpSignInLive), Layer.provide(Layer.succeedContext(core)), Layer.provide(logger)), scope)
    )
    const address = Context.get(http, HttpServer.HttpServer).address
    const host = address._tag === "TcpAddress" ? address.hostname : "127.0.0.1"
    const origin = `http://${host.includes(":") ? `[${host}]` : host}:${address._tag === "TcpAddress" ? address.port : 0}`
    return {
      origin,
      baseUrl: `${origin}${apiPrefix}`,
      mcpUrl: `${origin}/mcp`,
      dataDir: options.dataDir,
      organization: boot.organization,
      bootstrapKey: boot.secret,
      demo,
      flush: () => Effect.runPromise(Effect.flatMap(ActivityLog, (activity) => activity.flush).pipe(Effect.provide(core))),
      close: async () => {
        await served.requests.drain()
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    }
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw error
  }
}
