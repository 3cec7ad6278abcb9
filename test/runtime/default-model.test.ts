/**
 * The server's default model (issue 20) over real sockets, against a fake OpenAI-compatible server:
 * an Agent, a Flow `prompt` step and an App that name no model run on the server's default
 * (`defaultModel`, the option `svc serve --model` sets, over `SVC_MODEL`) and reads show it with
 * `modelSource: "default"`; a named model is kept; a restart with another default (or with no
 * endpoint: `builtin`) runs the new one, published versions included; MCP reads show the same; and
 * migration 0016 turns the `"model":"builtin"` that older Agents were kept with into "no model".
 */
import { SqlClient } from "@effect/sql"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { ServerOptions } from "../../server/server.js"
import { migrations } from "../../server/platform/sql/database.js"
import { type FakeOpenAi, type SeenRequest, say, startFakeOpenAi } from "../support/fake-openai.js"
import { dropTestDatabase, startTestServer, type TestServer } from "../support/server.js"
import { call, connect, personalKey } from "../support/mcp.js"
import { createAgent } from "./support.js"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"

let fake: FakeOpenAi
let server: TestServer
const dataDir = mkdtempSync(join(tmpdir(), "svc-default-model-"))

/** Model settings on the fake endpoint (fast failures), the server's default given as the CLI gives it. */
const onFake = (defaultModel: string): Partial<ServerOptions> => ({ model: { baseUrl: fake.baseUrl, backoffMs: 1, maxAttempts: 1 }, defaultModel })

/** (Re)starts the server on the shared data directory with `options`. */
const restart = async (options: Partial<ServerOptions>) => {
  const key = server?.key
  await server?.stop()
  server = await startTestServer({ dataDir, ...(key === undefined ? {} : { key }), server: options })
}

beforeAll(async () => {
  fake = await startFakeOpenAi((request: SeenRequest) => say(`answered by ${request.body.model}`))
  await restart(onFake("fake-default"))
})
afterAll(async () => {
  await server.stop()
  await fake.close()
  rmSync(dataDir, { recursive: true, force: true })
  await dropTestDatabase(dataDir)
})
beforeEach(() => server.clock.advance(60_000))

const post = async (path: string, body: unknown, status = 200) => {
  const response = await server.request("POST", path, { body })
  expect({ status: response.status, body: response.body }).toMatchObject({ status })
  return response.body
}
const get = async (path: string) => {
  const response = await server.request("GET", path)
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 200 })
  return response.body
}
/** The models the fake was asked for since request `since`. */
const modelsAskedSince = (since: number) => fake.requests.slice(since).map((request) => request.body.model)
const talk = (agentId: string) => post(`/agents/${agentId}/conversation`, { message: "Which model are you?" })

let unnamed: string
let named: string
let pinnedBuiltin: string

describe("Agents", () => {
  it("one created without model reads and runs as the server's default", async () => {
    const created = await post("/agents", { name: "Unnamed", instructions: "Be brief." }, 201)
    expect(created.agent).toMatchObject({ model: "fake-default", modelSource: "default" })
    unnamed = created.agent.id
    await post(`/agents/${unnamed}/publish`, undefined)
    expect((await get(`/agents/${unnamed}`)).agent).toMatchObject({ model: "fake-default", modelSource: "default", version: 1 })
    const seen = fake.requests.length
    const turn = await talk(unnamed)
    expect(turn.reply).toBe("answered by fake-default")
    expect(modelsAskedSince(seen)).toEqual(["fake-default"])
    const execution = (await get(`/executions/${turn.executionId}`)).execution
    expect(execution.steps).toEqual([expect.objectContaining({ type: "model", name: "fake-default" })])
  })

  it("one created with a model keeps it, builtin included", async () => {
    const created = await post("/agents", { name: "Named", model: "fake-named" }, 201)
    expect(created.agent).toMatchObject({ model: "fake-named", modelSource: "explicit" })
    named = created.agent.id
    await post(`/agents/${named}/publish`, undefined)
    pinnedBuiltin = await createAgent(server, { name: "Pinned builtin", model: "builtin" })
    expect((await get(`/agents/${pinnedBuiltin}`)).agent).toMatchObject({ model: "builtin", modelSource: "explicit" })
    const seen = fake.requests.length
    expect((await talk(named)).reply).toBe("answered by fake-named")
    expect((await talk(pinnedBuiltin)).reply).toMatch(/^There is no Knowledgebase to search/)
    expect(modelsAskedSince(seen)).toEqual(["fake-named"])
  })

  it("a draft edit names a model, and model: null goes back to the default", async () => {
    const id = await createAgent(server, { name: "Edited" }, { publish: false })
    const patch = (model: string | null) => server.request("PATCH", `/agents/${id}/draft`, { body: { model } })
    expect((await patch("fake-chosen")).body.agent).toMatchObject({ model: "fake-chosen", modelSource: "explicit" })
    expect((await patch(null)).body.agent).toMatchObject({ model: "fake-default", modelSource: "default" })
    expect((await get(`/agents/${id}/draft`)).agent).toMatchObject({ model: "fake-default", modelSource: "default" })
    expect((await post("/agents", { name: "Null model", model: null }, 201)).agent).toMatchObject({ modelSource: "default" })
    expect((await server.request("PATCH", `/agents/${id}/draft`, { body: { model: "" } })).status).toBe(400)
  })

  it("over MCP, save_agent answers the model as reads show it", async () => {
    const client: Client = await connect(server, await personalKey(server, "author@example.com", "member"))
    try {
      const saved = await call(client, "save_agent", { name: "Over MCP" })
      expect(saved.body.agent).toMatchObject({ model: "fake-default", modelSource: "default" })
      const pinned = await call(client, "save_agent", { agentId: "Over MCP", model: "fake-mcp" })
      expect(pinned.body.agent).toMatchObject({ model: "fake-mcp", modelSource: "explicit" })
      const reset = await call(client, "save_agent", { agentId: "Over MCP", model: null })
      expect(reset.body.agent).toMatchObject({ model: "fake-default", modelSource: "default" })
    } finally {
      await client.close()
    }
  })
})

let flow: string
let app: string

describe("Flow prompt steps and Apps", () => {
  it("a prompt step without model calls the server's default; one with a model keeps it", async () => {
    const created = await post(
      "/flows",
      {
        name: "Writer",
        questions: [],
        steps: [
          { type: "prompt", name: "unnamed", template: "Say {{message}}" },
          { type: "prompt", name: "named", template: "Again {{message}}", model: "fake-step" }
        ],
        output: "{{unnamed}} / {{named}}"
      },
      201
    )
    expect(created.flow.defaultModel).toBe("fake-default")
    expect(created.flow.steps[0]).toEqual({ type: "prompt", name: "unnamed", template: "Say {{message}}" })
    flow = created.flow.id
    await post(`/flows/${flow}/publish`, undefined)
    const seen = fake.requests.length
    const run = await post(`/flows/${flow}/run`, { message: "hello" })
    expect(run.reply).toBe("answered by fake-default / answered by fake-step")
    expect(modelsAskedSince(seen)).toEqual(["fake-default", "fake-step"])
  })

  it("an App's Supervisor runs on the server's default, and App reads say so", async () => {
    const created = await post("/apps", { name: "Desk", agentIds: [named] }, 201)
    expect(created.app).toMatchObject({ model: "fake-default", modelSource: "default" })
    app = created.app.id
    await post(`/apps/${app}/publish`, undefined)
    expect((await get(`/apps/${app}`)).app).toMatchObject({ model: "fake-default", modelSource: "default", version: 1 })
    const seen = fake.requests.length
    const turn = await post(`/apps/${app}/conversation`, { message: "Hello" })
    expect(turn.reply).toBe("answered by fake-default")
    const supervisor = fake.requests[seen]!
    expect(supervisor.body.model).toBe("fake-default")
    expect(supervisor.body.tools.map((tool: any) => tool.function.name)).toEqual(["ask_named"])
  })
})

describe("a restart with another default", () => {
  it("runs the new default everywhere nothing names one, published versions included; named models are kept", async () => {
    await restart(onFake("fake-next"))
    expect((await get(`/agents/${unnamed}`)).agent).toMatchObject({ model: "fake-next", modelSource: "default", version: 1 })
    expect((await get(`/agents/${named}`)).agent).toMatchObject({ model: "fake-named", modelSource: "explicit" })
    expect((await get(`/flows/${flow}/draft`)).flow.defaultModel).toBe("fake-next")
    expect((await get(`/apps/${app}/draft`)).app).toMatchObject({ model: "fake-next", modelSource: "default" })
    const seen = fake.requests.length
    expect((await talk(unnamed)).reply).toBe("answered by fake-next")
    expect((await talk(named)).reply).toBe("answered by fake-named")
    expect((await post(`/flows/${flow}/run`, { message: "hi" })).reply).toBe("answered by fake-next / answered by fake-step")
    expect((await post(`/apps/${app}/conversation`, { message: "Hello" })).reply).toBe("answered by fake-next")
    expect(modelsAskedSince(seen)).toEqual(["fake-next", "fake-named", "fake-next", "fake-step", "fake-next"])
  })

  it("reads SVC_MODEL from the environment, the defaultModel option (svc serve --model) winning over it", async () => {
    process.env.SVC_MODEL_BASE_URL = fake.baseUrl
    process.env.SVC_MODEL = "fake-env"
    try {
      await restart({})
      expect((await get(`/agents/${unnamed}`)).agent).toMatchObject({ model: "fake-env", modelSource: "default" })
      await restart({ defaultModel: "fake-flag" })
      expect((await get(`/agents/${unnamed}`)).agent).toMatchObject({ model: "fake-flag", modelSource: "default" })
      const seen = fake.requests.length
      expect((await talk(unnamed)).reply).toBe("answered by fake-flag")
      expect(modelsAskedSince(seen)).toEqual(["fake-flag"])
    } finally {
      delete process.env.SVC_MODEL_BASE_URL
      delete process.env.SVC_MODEL
    }
  })

  it("without a model endpoint the default is builtin and nothing reaches the fake", async () => {
    await restart({ model: { backoffMs: 1, maxAttempts: 1 } })
    expect((await get(`/agents/${unnamed}`)).agent).toMatchObject({ model: "builtin", modelSource: "default" })
    expect((await get(`/agents/${named}`)).agent).toMatchObject({ model: "fake-named", modelSource: "explicit" })
    const seen = fake.requests.length
    const turn = await talk(unnamed)
    expect(turn.reply).toMatch(/^There is no Knowledgebase to search/)
    expect((await get(`/executions/${turn.executionId}`)).execution.steps).toEqual([expect.objectContaining({ type: "model", name: "builtin" })])
    expect(fake.requests.length).toBe(seen)
  })
})

describe("migration 0016", () => {
  it("turns the builtin that older Agents were kept with into no model, drafts and versions, and leaves other names alone", async () => {
    await restart(onFake("fake-default"))
    const legacy = await createAgent(server, { name: "Legacy" })
    const legacyNamed = await createAgent(server, { name: "Legacy named", model: "llama3" })
    const keptAs = (model: string) => JSON.stringify({ instructions: "", model, greeting: null, knowledgebaseIds: [], flowIds: [] })
    await server.admin(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE agents SET draft = ${keptAs("builtin")} WHERE id = ${legacy}`
        yield* sql`UPDATE agent_versions SET definition = ${keptAs("builtin")} WHERE agent_id = ${legacy}`
        yield* sql`UPDATE agents SET draft = ${keptAs("llama3")} WHERE id = ${legacyNamed}`
      }).pipe(writing(writesEveryTable))
    )
    expect((await get(`/agents/${legacy}`)).agent).toMatchObject({ model: "builtin", modelSource: "explicit" })
    const updatedAt = (await get(`/agents/${legacy}/draft`)).agent.updatedAt

    await server.admin(writing(writesEveryTable)(migrations["0016_agent_default_model"]))
    const rows = await server.admin(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ draft: string }>`SELECT draft FROM agents WHERE id IN (${legacy}, ${legacyNamed}) ORDER BY name`)
    )
    expect(rows.map((row) => JSON.parse(row.draft).model)).toEqual([undefined, "llama3"])
    expect((await get(`/agents/${legacy}`)).agent).toMatchObject({ model: "fake-default", modelSource: "default" })
    expect((await get(`/agents/${legacy}/draft`)).agent).toMatchObject({ model: "fake-default", modelSource: "default", updatedAt })
    expect((await get(`/agents/${legacyNamed}/draft`)).agent).toMatchObject({ model: "llama3", modelSource: "explicit" })
    const seen = fake.requests.length
    expect((await talk(legacy)).reply).toBe("answered by fake-default")
    expect(modelsAskedSince(seen)).toEqual(["fake-default"])
  })
})
