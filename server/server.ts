/**
 * Assembles the service: database, domain services, the HTTP API and its middleware, on a Node
 * HTTP server. `startServer` is what `svc serve` and the tests run.
 */
import { HttpApiBuilder, HttpMiddleware, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, type LogLevel, Scope } from "effect"
import { createServer } from "node:http"
import { Api, apiPrefix } from "./api.js"
import { type DemoIds, seedDemo } from "./demo/seed.js"
import { features } from "./features.js"
import { ActivityLog } from "./knowledge/activity/service.js"
import { IngestionConfig, type IngestionSettings } from "./knowledge/sources/ingestion-config.js"
import { AccountsService } from "./platform/accounts/service.js"
import { AppClock } from "./platform/clock.js"
import { mergeLayers } from "./platform/feature.js"
import { AuthenticationLive } from "./platform/http/authentication.js"
import { McpHttpLive } from "./mcp/http.js"
import { PortalHttpLive } from "./portal/http.js"
import { withProtocolErrorEnvelopes } from "./platform/http/protocol-errors.js"
import { RequestLogLive, type RequestLogOptions } from "./platform/http/request-log.js"
import { BodySizeLimitLive, RequestMiddlewareLive } from "./platform/http/request-middleware.js"
import { IdempotencyStore } from "./platform/idempotency.js"
import { Cursors } from "./platform/pagination.js"
import { RateLimiter, RequestRate, requestRate } from "./platform/rate-limiter.js"
import { StderrLogger } from "./platform/logging.js"
import { DatabaseLive } from "./platform/sql/database.js"
import { ReadConnection } from "./platform/sql/read-connection.js"
import { ModelConfig, type ModelSettings } from "./runtime/config.js"
import { RunSettings, type RunSettingsShape } from "./runtime/runs/settings.js"
import { WebhookSettings, type WebhookSettingsShape } from "./webhooks/domain.js"

/** How to run the server. */
export interface ServerOptions {
  readonly dataDir: string
  readonly host?: string | undefined
  readonly port?: number | undefined
  /** The clock (milliseconds since the epoch); tests drive it by hand. */
  readonly now?: (() => number) | undefined
  /** Least severe log level written to stderr. */
  readonly logLevel?: LogLevel.LogLevel | undefined
  /** Writes one line per request (`svc serve`); none when undefined. */
  readonly requestLog?: RequestLogOptions | undefined
  /** Lets `url` sources and webhooks reach loopback and private addresses (local development). */
  readonly allowPrivateUrls?: boolean | undefined
  /** Seconds before webhook delivery attempts 2, 3 and 4 (default 10, 60, 300). */
  readonly webhookRetryDelays?: readonly [number, number, number] | undefined
  /** Overrides the per-key rate of 120 requests per minute (benchmarks only). */
  readonly requestsPerMinute?: number | undefined
  /** Seeds demo content on the first start of an empty data directory (`svc serve --demo`). */
  readonly demo?: boolean | undefined
  /** Runs the ingestion worker (default true; tests of restarts start servers without it). */
  readonly ingestionWorker?: boolean | undefined
  /** Overrides ingestion limits (tests: which addresses count as public, job time limits). */
  readonly ingestion?: Partial<Omit<IngestionSettings, "allowPrivateUrls">> | undefined
  /** Model settings over the defaults (tests); none reads `SVC_MODEL_*` from the environment. */
  readonly model?: Partial<ModelSettings> | undefined
  /** Run settings over the defaults (tests shorten the 15 s keep-alive of streamed replies). */
  readonly runs?: Partial<RunSettingsShape> | undefined
  /** Webhook delivery settings over the defaults (tests poll often); retry delays come from `webhookRetryDelays`. */
  readonly webhooks?: Partial<Omit<WebhookSettingsShape, "retryDelaysSeconds" | "allowPrivateUrls">> | undefined
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
  /** What `demo` seeded on this start, or null. */
  readonly demo: DemoIds | null
  /** Writes what background work still holds in memory (recent activity), as shutdown does. */
  readonly flush: () => Promise<void>
  /** Stops accepting connections, lets in-flight requests finish, then closes the database. */
  readonly close: () => Promise<void>
}


/** Domain services over the database, shared by the HTTP server, the CLI and (later) MCP. */
export const CoreLive = (
  options: Pick<
    ServerOptions,
    "dataDir" | "now" | "requestsPerMinute" | "allowPrivateUrls" | "ingestion" | "model" | "runs" | "webhooks" | "webhookRetryDelays"
  >
) =>
  Layer.mergeAll(
    Layer.succeed(RequestRate, { ...requestRate, limit: options.requestsPerMinute ?? requestRate.limit }),
    AccountsService.Default,
    Cursors.Default,
    IdempotencyStore.Default,
    RateLimiter.Default,
    mergeLayers(features.map((feature) => feature.services)),
    ReadConnection.Default
  ).pipe(
    Layer.provideMerge(IngestionConfig.layer({ ...options.ingestion, allowPrivateUrls: options.allowPrivateUrls ?? false })),
    Layer.provideMerge(options.model === undefined ? ModelConfig.fromEnv() : ModelConfig.layer(options.model)),
    Layer.provideMerge(RunSettings.layer(options.runs)),
    Layer.provideMerge(
      WebhookSettings.layer({
        ...options.webhooks,
        allowPrivateUrls: options.allowPrivateUrls ?? false,
        ...(options.webhookRetryDelays === undefined ? {} : { retryDelaysSeconds: options.webhookRetryDelays })
      })
    ),
    Layer.provideMerge(options.now ? AppClock.from(options.now) : AppClock.system),
    Layer.provideMerge(DatabaseLive(options.dataDir))
  )

const HttpLive = (options: ServerOptions) =>
  HttpApiBuilder.serve().pipe(
    HttpMiddleware.withTracerDisabledWhen(() => true),
    Layer.provide(RequestLogLive(options.requestLog)),
    Layer.provide(McpHttpLive),
    Layer.provide(PortalHttpLive),
    Layer.provide(BodySizeLimitLive),
    Layer.provide(RequestMiddlewareLive),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: `${apiPrefix}/openapi.json` })),
    Layer.provide(
      HttpApiBuilder.api(Api).pipe(
        Layer.provide(mergeLayers(features.map((feature) => feature.http))),
        Layer.provide(AuthenticationLive(Api))
      )
    ),
    Layer.provideMerge(NodeHttpServer.layer(() => withProtocolErrorEnvelopes(createServer()), { port: options.port ?? 8787, host: options.host ?? "127.0.0.1" }))
  )

/** Starts the whole service and resolves once it accepts connections. */
export const startServer = async (options: ServerOptions): Promise<RunningServer> => {
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
        Layer.buildWithScope(mergeLayers(features.map((feature) => feature.workers)).pipe(Layer.provide(Layer.succeedContext(core)), Layer.provide(logger)), scope)
      )
    }
    const demo =
      options.demo && boot.secret !== null ? await Effect.runPromise(seedDemo(boot.secret).pipe(Effect.provide(core))) : null
    const http = await Effect.runPromise(
      Layer.buildWithScope(HttpLive(options).pipe(Layer.provide(Layer.succeedContext(core)), Layer.provide(logger)), scope)
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
      close: () => Effect.runPromise(Scope.close(scope, Exit.void))
    }
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw error
  }
}
