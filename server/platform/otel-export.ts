/**
 * The OpenTelemetry export of execution traces over OTLP/HTTP (JSON), with the maintained
 * `@opentelemetry/*` packages. Imported only by `otel.ts` when an endpoint is set. Each finished
 * execution becomes one trace: a root span `svc.execution` and its recorded spans beneath it, with
 * their own parent/child structure, start and end times, status and fields as attributes (model
 * calls also under GenAI's names). Spans are batched and sent in the background; a collector that
 * cannot be reached loses spans, never a run.
 */
import { type Attributes, type AttributeValue, context, type Span, SpanStatusCode, trace } from "@opentelemetry/api"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { resourceFromAttributes } from "@opentelemetry/resources"
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace"
import type { ExportableSpan, ExportedExecution } from "./otel-span.js"

/** An open export: `record` queues one execution's spans, `shutdown` sends what is queued and stops. */
export interface OtlpExport {
  readonly record: (execution: ExportedExecution, spans: ReadonlyArray<ExportableSpan>) => void
  readonly shutdown: () => Promise<void>
}

/** The fields of a span that are its structure, not attributes. */
const structural = new Set(["id", "parentId", "kind", "name", "startedAt", "finishedAt", "durationMs", "status", "error"])

/** Attribute names of fields that have a GenAI semantic-convention name. */
const genAiNames: Readonly<Record<string, string>> = {
  model: "gen_ai.request.model",
  provider: "gen_ai.system",
  tokensIn: "gen_ai.usage.input_tokens",
  tokensOut: "gen_ai.usage.output_tokens"
}

/** A field as an attribute value: primitives as they are, anything else as JSON text. */
const attributeValue = (value: unknown): AttributeValue | undefined => {
  if (value === null || value === undefined) return undefined
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value
  return JSON.stringify(value)
}

/** The attributes of a recorded span: `svc.span.kind` and its fields as `svc.<field>` (or their GenAI names). */
const attributesOf = (span: ExportableSpan): Attributes => {
  const attributes: Attributes = { "svc.span.kind": span.kind, "svc.span.id": span.id }
  for (const [key, value] of Object.entries(span)) {
    if (structural.has(key)) continue
    const converted = attributeValue(value)
    if (converted === undefined) continue
    attributes[genAiNames[key] ?? `svc.${key}`] = converted
  }
  return attributes
}

/** The collector's traces URL: `endpoint` itself when it ends in `/v1/traces`, else that path added. */
export const tracesUrl = (endpoint: string): string => (/\/v1\/traces\/?$/.test(endpoint) ? endpoint : `${endpoint.replace(/\/+$/, "")}/v1/traces`)

/** Opens the export to the collector at `endpoint`. */
export const openOtlpExport = (endpoint: string): OtlpExport => {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": "svc" }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: tracesUrl(endpoint) }) })]
  })
  const tracer = provider.getTracer("svc")
  return {
    record: (execution, spans) => {
      const root = tracer.startSpan(
        "svc.execution",
        {
          startTime: new Date(execution.startedMs),
          attributes: {
            "svc.execution.id": execution.id,
            "svc.execution.kind": execution.kind,
            "svc.execution.target_id": execution.targetId,
            "svc.execution.status": execution.status,
            "svc.organization.id": execution.organizationId
          }
        },
        context.active()
      )
      const opened = new Map<string, Span>()
      // Spans are in the order they started: a parent is always opened before its children.
      for (const span of spans) {
        const parent = (span.parentId === null ? undefined : opened.get(span.parentId)) ?? root
        const started = Date.parse(span.startedAt)
        const child = tracer.startSpan(`${span.kind} ${span.name}`, { startTime: new Date(started), attributes: attributesOf(span) }, trace.setSpan(context.active(), parent))
        if (span.status === "error") child.setStatus({ code: SpanStatusCode.ERROR, ...(span.error === undefined ? {} : { message: span.error }) })
        opened.set(span.id, child)
      }
      for (const span of spans) opened.get(span.id)!.end(new Date(Date.parse(span.startedAt) + span.durationMs))
      if (execution.status !== "succeeded") root.setStatus({ code: SpanStatusCode.ERROR, ...(execution.error === null ? {} : { message: execution.error }) })
      root.end(new Date(Math.max(execution.finishedMs, execution.startedMs)))
    },
    shutdown: () => provider.shutdown()
  }
}
