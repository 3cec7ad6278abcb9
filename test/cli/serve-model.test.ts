/**
 * The README's tour on a real model: the real `svc serve --demo` process given two environment
 * variables, `SVC_MODEL_BASE_URL` (here a fake OpenAI-compatible server on a real socket) and
 * `SVC_MODEL`, runs the demo's Agent (which names no model) on `SVC_MODEL` at that endpoint.
 */
import { afterAll, describe, expect, it } from "vitest"
import { type FakeOpenAi, say, startFakeOpenAi } from "../support/fake-openai.js"
import { jsonRequest } from "../support/server-process.js"
import { apiGet, backendDataDir, parseOneDocument, removeDataDirs, slow, startProcess } from "./helpers.js"

let fake: FakeOpenAi | undefined
afterAll(async () => {
  await fake?.close()
  await removeDataDirs()
})

describe("svc serve with SVC_MODEL_BASE_URL and SVC_MODEL", slow, () => {
  it("runs the demo's Agent on SVC_MODEL at the endpoint, and reads show it as the default", async () => {
    fake = await startFakeOpenAi((request) => say(`answered by ${request.body.model}`))
    const env = { SVC_MODEL_BASE_URL: fake.baseUrl, SVC_MODEL: "fake-env-model" }
    const served = startProcess(["serve", "--port", "0", "--demo", "--json"], await backendDataDir(), env)
    try {
      await served.waitFor((stdout) => stdout.includes("\n"))
      const { baseUrl, bootstrapKey, demo } = parseOneDocument(served.stdout())
      const agent = await apiGet(baseUrl, `/agents/${demo.agentId}`, bootstrapKey)
      expect(agent.body.agent).toMatchObject({ model: "fake-env-model", modelSource: "default" })
      const turn = await jsonRequest(baseUrl, bootstrapKey, "POST", `/agents/${demo.agentId}/conversation`, { message: "How long do I have to return a chair?" })
      expect(turn).toMatchObject({ status: 200, body: { reply: "answered by fake-env-model" } })
      expect(fake.requests.map((request) => request.body.model)).toEqual(["fake-env-model"])
    } finally {
      expect((await served.stop()).code).toBe(0)
    }
  })

  it("--model names the default over SVC_MODEL; a default model without an endpoint is warned about at start", async () => {
    fake ??= await startFakeOpenAi((request) => say(`answered by ${request.body.model}`))
    fake.requests.length = 0
    const env = { SVC_MODEL_BASE_URL: fake.baseUrl, SVC_MODEL: "fake-env-model" }
    const served = startProcess(["serve", "--port", "0", "--demo", "--json", "--model", "fake-flag-model"], await backendDataDir(), env)
    try {
      await served.waitFor((stdout) => stdout.includes("\n"))
      const { baseUrl, bootstrapKey, demo } = parseOneDocument(served.stdout())
      const turn = await jsonRequest(baseUrl, bootstrapKey, "POST", `/agents/${demo.agentId}/conversation`, { message: "Shipping to Norway?" })
      expect(turn).toMatchObject({ status: 200, body: { reply: "answered by fake-flag-model" } })
      expect(fake.requests.map((request) => request.body.model)).toEqual(["fake-flag-model"])
      expect(served.stderr()).not.toContain("needs SVC_MODEL_BASE_URL")
    } finally {
      expect((await served.stop()).code).toBe(0)
    }
    const offline = startProcess(["serve", "--port", "0", "--json", "--quiet", "--model", "llama3"], await backendDataDir())
    try {
      await offline.waitFor((stdout) => stdout.includes("\n"))
      expect(offline.stderr()).toContain("the default model 'llama3' needs SVC_MODEL_BASE_URL")
    } finally {
      expect((await offline.stop()).code).toBe(0)
    }
  })
})
