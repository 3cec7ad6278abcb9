/**
 * The OpenTelemetry export of execution traces (issue 25): a server started with `otelEndpoint`
 * (`svc serve --otel-endpoint`) sends each finished execution's spans over OTLP/HTTP (JSON) to a
 * local receiver on a real socket. One Agent turn on `builtin` with a Knowledgebase arrives as one
 * trace: the execution's root span, the model call beneath it and the search beneath the model
 * call (builtin searches while it answers), with their times and attributes; the same spans as the
 * stored trace of `GET /executions/{id}?view=full`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { insertKnowledgebases } from "../support/fixtures.js"
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { readySource } from "../support/sources.js"
import { createAgent } from "./support.js"

let receiver: OtlpReceiver
let server: TestServer
let stopped = false

beforeAll(async () => {
  receiver = await startOtlpReceiver()
  server = await startTestServer({ server: { otelEndpoint: receiver.url } })
})
afterAll(async () => {
  if (!stopped) await server.stop()
  await receiver.close()
})

describe("--otel-endpoint", () => {
  it("exports one run's spans with their parent/child structure, times and attributes", async () => {
    const [kb] = await insertKnowledgebases(server, { count: 1, prefix: "Exported" })
    await readySource(server, kb!.id, { name: "Shipping guide", markdown: true, text: "# Shipping\n\nParcels ship every Tuesday from the Leeds depot.\n" })
    const agent = await createAgent(server, { name: "Exported", knowledgebaseIds: [kb!.id] })
    const turn = await server.request("POST", `/agents/${agent}/conversation`, { body: { message: "When do parcels ship?" } })
    expect(turn.status).toBe(200)
    const stored = (await server.request("GET", `/executions/${turn.body.executionId}?view=full`)).body.execution.trace.spans
    // Stopping the server flushes the spans still batched.
    await server.stop()
    stopped = true

    expect(receiver.contentTypes.every((type) => type.startsWith("application/json"))).toBe(true)
    const root = receiver.spans.find((span) => span.name === "svc.execution" && span.attributes["svc.execution.id"] === turn.body.executionId)!
    expect(root).toBeDefined()
    expect(root.parentSpanId).toBe("")
    expect(root.resource["service.name"]).toBe("svc")
    expect(root.attributes).toMatchObject({
      "svc.execution.id": turn.body.executionId,
      "svc.execution.kind": "agent",
      "svc.execution.target_id": agent,
      "svc.execution.status": "succeeded"
    })
    const inTrace = receiver.spans.filter((span) => span.traceId === root.traceId)
    expect(inTrace.map((span) => span.name).sort()).toEqual(["model builtin", "svc.execution", "tool search_knowledgebases"])
    const model = inTrace.find((span) => span.name === "model builtin")!
    const search = inTrace.find((span) => span.name === "tool search_knowledgebases")!
    expect(model.parentSpanId).toBe(root.spanId)
    expect(search.parentSpanId).toBe(model.spanId)
    expect(model.attributes).toMatchObject({ "gen_ai.request.model": "builtin", "gen_ai.system": "builtin", "svc.span.kind": "model", "svc.span.id": stored[0].id })
    expect(JSON.parse(String(model.attributes["svc.reply"])).text).toBe(turn.body.reply)
    expect(search.attributes["svc.span.kind"]).toBe("tool")
    expect(JSON.parse(String(search.attributes["svc.arguments"]))).toEqual({ query: "When do parcels ship?" })
    const passages = JSON.parse(String(search.attributes["svc.passages"]))
    expect(passages[0]).toMatchObject({ source: "Shipping guide", score: expect.any(Number), citation: { knowledgebaseId: kb!.id } })
    // Children start no earlier than their parent and end no later than the execution.
    for (const [child, parent] of [[model, root], [search, model]] as const) {
      expect(child.startNs >= parent.startNs).toBe(true)
      expect(child.endNs >= child.startNs).toBe(true)
    }
    expect(root.endNs >= model.endNs).toBe(true)
    expect(inTrace.every((span) => span.statusCode !== 2)).toBe(true)
  })
})
