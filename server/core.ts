/**
 * The service's core: the database and every domain service over it, shared by the HTTP server
 * (`server.ts`) and the in-process MCP server of `svc mcp`.
 */
import { Layer } from "effect"
import { allFeatureServices } from "./feature-services.js"
import { EmbeddingConfig, type EmbeddingSettings } from "./knowledge/embeddings/config.js"
import { IngestionConfig, type IngestionSettings } from "./knowledge/sources/ingestion-config.js"
import { AccountsService } from "./identity/service.js"
import { ClientMetadataSettings, type ClientMetadataSettingsShape, defaultClientMetadataSettings } from "./identity/mcp-sign-in/client-metadata.js"
import { AppClock } from "./platform/clock.js"
import { mergeLayers } from "./platform/feature.js"
import { IdempotencyStore } from "./platform/idempotency.js"
import { InstanceRegistry } from "./platform/instances/registry.js"
import { InstanceSettings, type InstanceSettingsShape } from "./platform/instances/settings.js"
import { Cursors } from "./platform/pagination.js"
import { ServerSettings } from "./platform/settings-repo.js"
import { RateLimiter, RequestRate, requestRate } from "./platform/rate-limiter.js"
import { DatabaseLive } from "./platform/sql/database.js"
import { CacheVersions } from "./platform/sql/cache-versions.js"
import { ReadConnection } from "./platform/sql/read-connection.js"
import { ModelConfig, type ModelSettings } from "./platform/model-config.js"
import { RunSettings, type RunSettingsShape } from "./runtime/runs/settings.js"
import { traceExportLayer } from "./platform/otel.js"
import { WebhookSettings, type WebhookSettingsShape } from "./webhooks/domain.js"

/** What the core is built from. */
export interface CoreOptions {
  readonly dataDir: string
  /** A `postgres://` URL to run on PostgreSQL (`--database`, `SVC_DATABASE_URL`); the data directory's SQLite file when absent. */
  readonly database?: string | undefined
  /** The clock (milliseconds since the epoch); tests drive it by hand. */
  readonly now?: (() => number) | undefined
  /** Lets `url` sources and webhooks reach loopback and private addresses (local development). */
  readonly allowPrivateUrls?: boolean | undefined
  /** Seconds before webhook delivery attempts 2, 3 and 4 (default 10, 60, 300). */
  readonly webhookRetryDelays?: readonly [number, number, number] | undefined
  /** Overrides the per-key rate of 120 requests per minute (benchmarks only). */
  readonly requestsPerMinute?: number | undefined
  /** Overrides ingestion limits (tests: which addresses count as public, job time limits). */
  readonly ingestion?: Partial<Omit<IngestionSettings, "allowPrivateUrls">> | undefined
  /**
   * The server's default model (`svc serve --model`), over `SVC_MODEL`: what Agents, Flow `prompt`
   * steps and App Supervisors that name no model run on. Blank counts as not given.
   */
  readonly defaultModel?: string | undefined
  /** Model settings over the defaults (tests); none reads `SVC_MODEL_*` from the environment. `defaultModel` wins over theirs. */
  readonly model?: Partial<ModelSettings> | undefined
  /**
   * The embedding model of hybrid search (`svc serve --embedding-model`), over `SVC_EMBEDDING_MODEL`.
   * Blank counts as not given.
   */
  readonly embeddingModel?: string | undefined
  /** Embedding settings over the defaults (tests); none reads `SVC_EMBEDDING_*` (and `SVC_MODEL_*`) from the environment. */
  readonly embedding?: Partial<EmbeddingSettings> | undefined
  /** Run settings over the defaults (tests shorten the 15 s keep-alive of streamed replies). */
  readonly runs?: Partial<RunSettingsShape> | undefined
  /** The OpenTelemetry collector finished executions' traces are exported to over OTLP/HTTP (`svc serve --otel-endpoint`); none exports nothing. */
  readonly otelEndpoint?: string | undefined
  /** Webhook delivery settings over the defaults (tests poll often); retry delays come from `webhookRetryDelays`. */
  readonly webhooks?: Partial<Omit<WebhookSettingsShape, "retryDelaysSeconds" | "allowPrivateUrls">> | undefined
  /** Instance registry settings over the defaults (tests shorten the heartbeat and so the lease). */
  readonly instances?: Partial<InstanceSettingsShape> | undefined
  /** How MCP sign-in fetches client metadata documents, over the defaults (tests trust their own certificate authority); private addresses come from `allowPrivateUrls`. */
  readonly clientMetadata?: Partial<Omit<ClientMetadataSettingsShape, "allowPrivate">> | undefined
}

/** The model settings of `options`: the environment's (or the tests' `model`), `defaultModel` over their default model. */
const modelConfigOf = (options: CoreOptions) => {
  const defaultModel = options.defaultModel?.trim() || undefined
  if (options.model === undefined) return ModelConfig.fromEnv(process.env, defaultModel)
  return ModelConfig.layer(defaultModel === undefined ? options.model : { ...options.model, defaultModel })
}

/** The embedding settings of `options`: the environment's (or the tests' `embedding`), `embeddingModel` over their model. */
const embeddingConfigOf = (options: CoreOptions) => {
  const model = options.embeddingModel?.trim() || undefined
  if (options.embedding === undefined) return EmbeddingConfig.fromEnv(process.env, model)
  return EmbeddingConfig.layer(model === undefined ? options.embedding : { ...options.embedding, model })
}

/** Domain services over the database, shared by the HTTP server, `svc mcp` and the benchmarks. */
export const CoreLive = (
  options: CoreOptions
) =>
  Layer.mergeAll(
    Layer.succeed(RequestRate, { ...requestRate, limit: options.requestsPerMinute ?? requestRate.limit }),
    AccountsService.Default,
    Cursors.Default,
    ServerSettings.Default,
    IdempotencyStore.Default,
    RateLimiter.Default,
    mergeLayers(allFeatureServices)
  ).pipe(
    // The registry's row goes before the connections its last write needs close (a clean shutdown deletes it).
    Layer.provideMerge(InstanceRegistry.Default),
    Layer.provideMerge(Layer.merge(ReadConnection.Default, CacheVersions.Default)),
    Layer.provideMerge(InstanceSettings.layer(options.instances)),
    Layer.provideMerge(IngestionConfig.layer({ ...options.ingestion, allowPrivateUrls: options.allowPrivateUrls ?? false })),
    Layer.provideMerge(modelConfigOf(options)),
    Layer.provideMerge(embeddingConfigOf(options)),
    Layer.provideMerge(RunSettings.layer(options.runs)),
    Layer.provideMerge(traceExportLayer(options.otelEndpoint)),
    Layer.provideMerge(Layer.succeed(ClientMetadataSettings, { ...defaultClientMetadataSettings, ...options.clientMetadata, allowPrivate: options.allowPrivateUrls ?? false })),
    Layer.provideMerge(
      WebhookSettings.layer({
        ...options.webhooks,
        allowPrivateUrls: options.allowPrivateUrls ?? false,
        ...(options.webhookRetryDelays === undefined ? {} : { retryDelaysSeconds: options.webhookRetryDelays })
      })
    ),
    Layer.provideMerge(options.now ? AppClock.from(options.now) : AppClock.system),
    Layer.provideMerge(DatabaseLive(options.dataDir, options.database))
  )

/** The services the core provides. */
export type CoreServices = Layer.Layer.Success<ReturnType<typeof CoreLive>>
