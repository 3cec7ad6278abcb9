/**
 * Where finished executions' traces go beyond the database: nowhere by default, or an
 * OpenTelemetry collector over OTLP/HTTP (`svc serve --otel-endpoint URL`, `SVC_OTEL_ENDPOINT`).
 * The OpenTelemetry packages are imported (`otel-export.ts`) only when an endpoint is set, so the
 * CLI and a server without one load none of them.
 */
import { Context, Effect, Layer } from "effect"
import type { ExportableSpan, ExportedExecution } from "./otel-span.js"

export type { ExportableSpan, ExportedExecution } from "./otel-span.js"

/** Hands finished traces to an exporter; never fails and never waits on the network. */
export interface TraceExportShape {
  readonly export: (execution: ExportedExecution, spans: ReadonlyArray<ExportableSpan>) => Effect.Effect<void>
}

/** The trace exporter in effect: none unless a layer of `traceExportLayer` set one. */
export class TraceExport extends Context.Reference<TraceExport>()("svc/TraceExport", {
  defaultValue: (): TraceExportShape => ({ export: () => Effect.void })
}) {}

/**
 * The exporter to `endpoint` (the collector's base URL, `http://host:4318`, or its full traces URL
 * ending in `/v1/traces`), its spans flushed when the layer's scope closes (the server stops); no
 * endpoint (undefined or blank) leaves the default, which exports nothing.
 */
export const traceExportLayer = (endpoint: string | undefined): Layer.Layer<TraceExport> => {
  const url = endpoint?.trim() ?? ""
  if (url === "") return Layer.succeed(TraceExport, { export: () => Effect.void })
  return Layer.scoped(
    TraceExport,
    Effect.acquireRelease(
      Effect.promise(() => import("./otel-export.js").then(({ openOtlpExport }) => openOtlpExport(url))),
      (opened) => Effect.promise(() => opened.shutdown())
    ).pipe(Effect.map((opened): TraceExportShape => ({ export: (execution, spans) => Effect.sync(() => opened.record(execution, spans)) })))
  )
}
