/**
 * `svc serve --otel-endpoint URL` and `SVC_OTEL_ENDPOINT` (issue 25) as a command: the real
 * `bin/svc.js serve` process, given a local OTLP/HTTP receiver's URL by the flag or the variable,
 * runs one Agent turn and, stopped with SIGTERM, has sent that execution's spans (its root span and
 * the model call beneath it); given neither it sends nothing, even with OpenTelemetry's own
 * variables pointing at the receiver; an endpoint that is not an http(s) URL is a usage error
 * (exit 2) naming where it came from, before anything is created.
 */
import { readdirSync } from "node:fs"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js"
import { jsonRequest } from "../support/server-process.js"
import { backendDataDir, type CliEnv, expectFailure, freshDataDir, parseOneDocument, removeDataDirs, slow, startProcess, svcProcess } from "./helpers.js"

const receivers: Array<OtlpReceiver> = []
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close()
})
afterAll(removeDataDirs)

const receiver = async (): Promise<OtlpReceiver> => {
  const started = await startOtlpReceiver()
  receivers.push(started)
  return started
}

/**
 * Serves with `args` and `env`, runs one Agent turn (on `builtin`) over HTTP, then stops the
 * process with SIGTERM (which must exit 0); answers the turn's execution and the Agent's ids.
 */
const serveOneTurn = async (args: ReadonlyArray<string>, env: CliEnv = {}): Promise<{ executionId: string; agentId: string; reply: string }> => {
  const served = startProcess(["serve", "--port", "0", "--json", "--quiet", ...args], await backendDataDir(), env)
  try {
    await served.waitFor((stdout) => stdout.includes("\n"))
    const { baseUrl, bootstrapKey } = parseOneDocument(served.stdout())
    const created = await jsonRequest(baseUrl, bootstrapKey, "POST", "/agents", { name: "Exported", instructions: "Answer briefly." })
    expect(created.status).toBe(201)
    const agentId = created.body.agent.id as string
    expect((await jsonRequest(baseUrl, bootstrapKey, "POST", `/agents/${agentId}/publish`)).status).toBe(200)
    const turn = await jsonRequest(baseUrl, bootstrapKey, "POST", `/agents/${agentId}/conversation`, { message: "When do parcels ship?" })
    expect(turn.status).toBe(200)
    return { executionId: turn.body.executionId, agentId, reply: turn.body.reply }
  } finally {
    const stopped = await served.stop("SIGTERM")
    expect(stopped.code).toBe(0)
    expect(stopped.stderr).toBe("")
  }
}

/** Expects `received` to hold exactly the turn's trace: its root span and the model call beneath it. */
const expectExported = (received: OtlpReceiver, turn: { executionId: string; agentId: string; reply: string }) => {
  expect(received.contentTypes.length).toBeGreaterThan(0)
  expect(received.contentTypes.every((type) => type.startsWith("application/json"))).toBe(true)
  const root = received.spans.find((span) => span.name === "svc.execution")!
  expect(root).toBeDefined()
  expect(root.parentSpanId).toBe("")
  expect(root.resource["service.name"]).toBe("svc")
  expect(root.attributes).toMatchObject({
    "svc.execution.id": turn.executionId,
    "svc.execution.kind": "agent",
    "svc.execution.target_id": turn.agentId,
    "svc.execution.status": "succeeded"
  })
  expect(received.spans.map((span) => span.name).sort()).toEqual(["model builtin", "svc.execution"])
  expect(received.spans.every((span) => span.traceId === root.traceId)).toBe(true)
  const model = received.spans.find((span) => span.name === "model builtin")!
  expect(model.parentSpanId).toBe(root.spanId)
  expect(model.attributes).toMatchObject({ "gen_ai.request.model": "builtin", "gen_ai.system": "builtin", "svc.span.kind": "model", "svc.span.id": "1" })
  expect(JSON.parse(String(model.attributes["svc.messages"]))).toMatchObject({ count: 1, sent: [{ role: "user", text: "When do parcels ship?" }] })
  expect(JSON.parse(String(model.attributes["svc.reply"])).text).toBe(turn.reply)
  expect(model.startNs >= root.startNs).toBe(true)
  expect(root.endNs >= model.endNs).toBe(true)
  expect(received.spans.every((span) => span.statusCode !== 2)).toBe(true)
}

describe("svc serve --otel-endpoint", slow, () => {
  it("exports the turn's spans to the collector named by --otel-endpoint, flushed when SIGTERM stops it", async () => {
    const collector = await receiver()
    const turn = await serveOneTurn(["--otel-endpoint", collector.url])
    expectExported(collector, turn)
  })

  it("takes SVC_OTEL_ENDPOINT when the flag is not given (its traces URL, ending in /v1/traces, as well)", async () => {
    const collector = await receiver()
    const turn = await serveOneTurn([], { SVC_OTEL_ENDPOINT: `${collector.url}/v1/traces` })
    expectExported(collector, turn)
  })

  it("exports nothing without either, even with OpenTelemetry's own variables naming the receiver", async () => {
    const collector = await receiver()
    await serveOneTurn([], { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces` })
    expect(collector.contentTypes).toEqual([])
    expect(collector.spans).toEqual([])
  })

  it("refuses an endpoint that is not an http(s) URL as a usage error naming where it came from, and creates nothing", async () => {
    const shape = "write the collector's address, e.g. http://127.0.0.1:4318 (or its traces URL, ending in /v1/traces)."
    for (const [args, env, message] of [
      [["--otel-endpoint", "not-a-url"], {}, `svc: --otel-endpoint: 'not-a-url' is not an http or https URL: ${shape}`],
      [["--otel-endpoint", "ftp://127.0.0.1:4318"], {}, `svc: --otel-endpoint: 'ftp://127.0.0.1:4318' is not an http or https URL: ${shape}`],
      [[], { SVC_OTEL_ENDPOINT: "collector:4318" }, `svc: SVC_OTEL_ENDPOINT: 'collector:4318' is not an http or https URL: ${shape}`]
    ] as const) {
      const dataDir = freshDataDir()
      const run = await svcProcess(["serve", "--port", "0", ...args], dataDir, env)
      expect(expectFailure(run, 2)).toBe(message)
      expect(readdirSync(dataDir)).toEqual([])
    }
  })
})
