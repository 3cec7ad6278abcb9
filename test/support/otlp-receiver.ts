/**
 * A local OpenTelemetry collector for tests: an HTTP server taking OTLP/HTTP JSON exports at
 * `POST /v1/traces` (what `@opentelemetry/exporter-trace-otlp-http` sends) and keeping every span
 * received, flattened with its resource, its attributes decoded to plain values.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/** A span as received. */
export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  /** Empty for a root span. */
  readonly parentSpanId: string
  readonly name: string
  readonly startNs: bigint
  readonly endNs: bigint
  readonly attributes: Readonly<Record<string, unknown>>
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number
  readonly resource: Readonly<Record<string, unknown>>
}

/** The receiver: its base URL (the collector's, without `/v1/traces`) and what it received. */
export interface OtlpReceiver {
  readonly url: string
  readonly spans: Array<ReceivedSpan>
  /** Content types of the export requests received. */
  readonly contentTypes: Array<string>
  readonly close: () => Promise<void>
}

/** One OTLP `AnyValue` as a plain value. */
const plain = (value: any): unknown => {
  if (value === undefined || value === null) return null
  if ("stringValue" in value) return value.stringValue
  if ("boolValue" in value) return value.boolValue
  if ("intValue" in value) return Number(value.intValue)
  if ("doubleValue" in value) return value.doubleValue
  if ("arrayValue" in value) return (value.arrayValue.values ?? []).map(plain)
  return value
}

const attributesOf = (list: ReadonlyArray<any> | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((attribute) => [attribute.key, plain(attribute.value)]))

/** Starts the receiver on 127.0.0.1. */
export const startOtlpReceiver = async (): Promise<OtlpReceiver> => {
  const spans: Array<ReceivedSpan> = []
  const contentTypes: Array<string> = []
  const server: Server = createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (part: Buffer) => parts.push(part))
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end()
        return
      }
      contentTypes.push(String(req.headers["content-type"] ?? ""))
      const body = JSON.parse(Buffer.concat(parts).toString("utf8"))
      for (const resourceSpans of body.resourceSpans ?? []) {
        const resource = attributesOf(resourceSpans.resource?.attributes)
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? "",
              name: span.name,
              startNs: BigInt(span.startTimeUnixNano),
              endNs: BigInt(span.endTimeUnixNano),
              attributes: attributesOf(span.attributes),
              statusCode: span.status?.code ?? 0,
              resource
            })
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
