/**
 * The runs feature's MCP tools (the `run` family): published Agents and Apps listed and talked to,
 * and executions read, over the same services as `POST /agents/{id}/conversation`,
 * `/apps/{id}/conversation` and `GET /executions/{id}` (scopes, `apps` gate, credits, executions).
 * Runs are refused on a trial.
 */
import { Effect } from "effect"
import * as z from "zod/v4"
import type { Principal } from "../../identity/domain.js"
import { InvalidRequest } from "../../platform/errors.js"
import { scopeRefusal } from "../../http/authentication.js"
import { AgentsApi } from "../../builder/agents/api.js"
import { AgentService } from "../../builder/agents/service.js"
import { AppsApi } from "../../builder/apps/api.js"
import { AppService } from "../../builder/apps/service.js"
import { admits } from "../../mcp-door/admits.js"
import { operation } from "../../mcp-door/operation.js"
import { camelRunReply, itemsOf } from "../../mcp-door/output.js"
import { listArguments, operationArgument } from "../../mcp-door/operation-arguments.js"
import { idOrName, tool } from "../../mcp-door/tool.js"
import { agentIdOf, appIdOf } from "../../builder/mcp-ids.js"
import { agentConversationOperation, agentTurn, appConversationOperation, appTurn, turnInput } from "../mcp/turns.js"
import { RunsApi } from "./api.js"
import { RunService } from "./service.js"

const listAgentsOperation = operation(AgentsApi, "list")
const executionOperation = operation(RunsApi, "getExecution")

/** Which of an Agent or an App an id or name names (Agents first; an App when the caller may run Apps). */
const agentOrApp = (actor: Principal, given: string) =>
  Effect.gen(function* () {
    const agents = yield* AgentService
    const apps = yield* AppService
    const asAgent = yield* Effect.either(Effect.flatMap(agentIdOf(actor, given, "published"), (id) => Effect.as(agents.get(actor, id), id)))
    if (asAgent._tag === "Right") return { kind: "agent" as const, id: asAgent.right }
    if (admits(actor, appConversationOperation)) {
      const asApp = yield* Effect.either(Effect.flatMap(appIdOf(actor, given, "published"), (id) => Effect.as(apps.get(actor, id), id)))
      if (asApp._tag === "Right") return { kind: "app" as const, id: asApp.right }
    }
    return yield* asAgent.left
  })

const listAgents = tool({
  name: "list_agents",
  title: "List Agents and Apps",
  description: "Published Agents, then published Apps (each item has `kind`: `agent` or `app`). Talk to one with `run_agent`.",
  input: { ...listArguments(listAgentsOperation) },
  operation: [listAgentsOperation, operation(AppsApi, "list")],
  output: itemsOf({ kinds: ["agent", "app"] }),
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const limit = args.limit ?? 50
      const [part, inner] = args.cursor === undefined ? ["agents", undefined] : [args.cursor.slice(0, args.cursor.indexOf(":")), args.cursor.slice(args.cursor.indexOf(":") + 1) || undefined]
      if (part !== "agents" && part !== "apps") return yield* new InvalidRequest({ message: "cursor: not a cursor of this list." })
      const items: Array<Record<string, unknown>> = []
      let nextCursor: string | null = null
      const appsListed = principal.scopes.has("apps:read") && principal.organization.gates.has("apps")
      if (part === "agents" && principal.scopes.has("agents:read")) {
        const page = yield* (yield* AgentService).list(principal, { includeDrafts: false, updatedSince: null, limit, cursor: inner })
        items.push(...page.items.map((agent) => ({ kind: "agent", ...agent })))
        if (page.nextCursor !== null) nextCursor = `agents:${page.nextCursor}`
      }
      if (nextCursor === null && appsListed && items.length < limit) {
        const page = yield* (yield* AppService).list(principal, { includeDrafts: false, updatedSince: null, limit: limit - items.length, cursor: part === "apps" ? inner : undefined })
        items.push(...page.items.map((app) => ({ kind: "app", id: app.id, name: app.name, description: app.description })))
        if (page.nextCursor !== null) nextCursor = `apps:${page.nextCursor}`
      } else if (nextCursor === null && appsListed && part === "agents") {
        nextCursor = "apps:"
      }
      return { items, nextCursor }
    })
})

const runAgent = tool({
  name: "run_agent",
  title: "Talk to an Agent or App",
  description: "Talk to a published Agent or App (by id or exact name); answers `reply`, `conversationId` and `executionId`. One execution; credits as the REST run.",
  input: { agentId: z.string().min(1).describe("The Agent's or App's id or exact name."), ...turnInput },
  operation: [agentConversationOperation, appConversationOperation],
  output: camelRunReply,
  ownArguments: { agentId: idOrName },
  run: true,
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const target = yield* agentOrApp(principal, args.agentId)
      const refusal = scopeRefusal(principal, (target.kind === "agent" ? agentConversationOperation : appConversationOperation).scopes)
      if (refusal) return yield* refusal
      return target.kind === "agent" ? yield* agentTurn(principal, target.id, args, false) : yield* appTurn(principal, target.id, args, false)
    })
})

const getExecution = tool({
  name: "get_execution",
  description:
    "An execution: what ran, steps, tools called (without their arguments in the default summary view; `view: \"full\"` includes them and the trace: each model call, tool call with its result, routing and validation in order, with timings), credits, timings.",
  input: { executionId: operationArgument(executionOperation, "id").describe("The execution's id (REST's `id` path parameter)."), view: operationArgument(executionOperation, "view").optional().describe("`summary` (the default here: tool arguments left out) or `full` (with them and the trace).") },
  operation: executionOperation,
  ownArguments: {
    executionId: "REST's `id` path parameter (its bounds taken from it), named as answers name it (`executionId`)"
  },
  handler: (args, { principal }) =>
    Effect.map(Effect.flatMap(RunService, (runs) => runs.execution(principal, args.executionId, args.view !== "full", args.view === "full")), (found) => ({ execution: found }))
})

/** The run family's Agent, App and execution tools. */
export const agentRunTools = [listAgents, runAgent, getExecution] as const
