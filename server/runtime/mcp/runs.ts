/**
 * The `run` family: published Agents, Apps and Flows and their runs, over the same services as
 * `POST /agents/{id}/conversation`, `/apps/{id}/conversation`, `/flows/{id}/run` and
 * `GET /executions/{id}` (scopes, `apps` gate, credits, executions). Runs are refused on a trial.
 */
import { Effect } from "effect"
import * as z from "zod/v4"
import type { Principal } from "../../identity/domain.js"
import { InvalidRequest } from "../../platform/errors.js"
import { deliverWhole } from "../model.js"
import { scopeRefusal } from "../../http/authentication.js"
import { decodeBody } from "../../platform/request/decode.js"
import { AgentService } from "../../builder/agents/service.js"
import { AppService } from "../../builder/apps/service.js"
import { flowFields } from "../../builder/flows/domain.js"
import { FlowService } from "../../builder/flows/service.js"
import { AppRunService } from "../app-runs/service.js"
import { FlowRunRequest } from "../flow-runs/domain.js"
import { FlowRunService } from "../flow-runs/service.js"
import { ConversationTurn } from "../runs/domain.js"
import { RunService } from "../runs/service.js"
import { AgentsApi } from "../../builder/agents/api.js"
import { AppsApi } from "../../builder/apps/api.js"
import { FlowsApi } from "../../builder/flows/api.js"
import { AppRunsApi } from "../app-runs/api.js"
import { FlowRunsApi } from "../flow-runs/api.js"
import { RunsApi } from "../runs/api.js"
import { admits } from "../../mcp-door/admits.js"
import { operation } from "../../mcp-door/operation.js"
import { camelRunReply, itemsOf } from "../../mcp-door/output.js"
import { listArguments, operationArgument } from "../../mcp-door/operation-arguments.js"
import { camelReply, fieldsList, idOrName, itemsPage, tool } from "../../mcp-door/tool.js"
import { agentIdOf, appIdOf, flowIdOf } from "./builder-ids.js"
import { fieldsInput } from "../../mcp-door/shared-arguments.js"

/** `POST /agents/{id}/conversation`. */
export const agentConversationOperation = operation(RunsApi, "agentConversation")
/** `POST /apps/{id}/conversation`. */
export const appConversationOperation = operation(AppRunsApi, "appConversation")
/** `POST /flows/{id}/run`. */
export const runFlowOperation = operation(FlowRunsApi, "runFlow")
const listAgentsOperation = operation(AgentsApi, "list")
const listFlowsOperation = operation(FlowsApi, "list")
const executionOperation = operation(RunsApi, "getExecution")

/**
 * `message` and `conversationId` of a conversation turn (`conversationId` as REST's `conversation_id`),
 * both as `ConversationTurn` bounds them (a message of 1 to 32,000 characters): one rule for REST and MCP.
 */
export const turnInput = {
  message: operationArgument(agentConversationOperation, "message").describe("What to say."),
  conversationId: operationArgument(agentConversationOperation, "conversationId")
    .optional()
    .describe("Continues a conversation (from an earlier answer's `conversationId`).")
}

/** A conversation turn body as REST takes it, checked by the same schema. */
export const turnBody = (args: { message: string; conversationId?: string | undefined }) =>
  decodeBody(ConversationTurn)({ message: args.message, ...(args.conversationId === undefined ? {} : { conversation_id: args.conversationId }) })

/** Talks to a published (or draft) Agent: the same two steps as the REST handler, without streaming. */
export const agentTurn = (actor: Principal, agentId: string, args: { message: string; conversationId?: string | undefined }, draft: boolean) =>
  deliverWhole(
    Effect.gen(function* () {
      const runs = yield* RunService
      const prepared = yield* runs.prepareAgentTurn(actor, agentId, yield* turnBody(args), { draft })
      return camelReply(yield* runs.runAgentTurn(prepared))
    })
  )

/** Talks to a published (or draft) App. */
export const appTurn = (actor: Principal, appId: string, args: { message: string; conversationId?: string | undefined }, draft: boolean) =>
  deliverWhole(
    Effect.gen(function* () {
      const runs = yield* AppRunService
      const prepared = yield* runs.prepareTurn(actor, appId, yield* turnBody(args), { draft })
      return camelReply(yield* runs.runTurn(prepared))
    })
  )

/** Runs a published (or draft) Flow with inputs, or a conversational Flow with a message. */
export const flowRun = (
  actor: Principal,
  flowId: string,
  args: { inputs?: unknown; message?: string | undefined; conversationId?: string | undefined },
  draft: boolean
) =>
  Effect.gen(function* () {
    const runs = yield* FlowRunService
    const body = yield* decodeBody(FlowRunRequest)({
      ...(args.inputs === undefined ? {} : { inputs: args.inputs }),
      ...(args.message === undefined ? {} : { message: args.message }),
      ...(args.conversationId === undefined ? {} : { conversation_id: args.conversationId })
    })
    return camelReply(yield* runs.runFlow(yield* runs.prepareFlowRun(actor, flowId, body, { draft })))
  }).pipe(deliverWhole)

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

const listFlows = tool({
  name: "list_flows",
  description: "Published Flows with their inputs (questions as parameters, and as one JSON Schema).",
  input: { ...listArguments(listFlowsOperation), fields: fieldsInput(flowFields) },
  operation: listFlowsOperation,
  output: itemsOf(),
  ownArguments: { fields: fieldsList },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const page = yield* (yield* FlowService).list(principal, { includeDrafts: false, updatedSince: null, limit: args.limit, cursor: args.cursor })
      return itemsPage(page, args.fields)
    })
})

const runFlow = tool({
  name: "run_flow",
  description: "Run a published Flow (by id or exact name) with `inputs` keyed by parameter name (see `list_flows`); a Flow without questions takes `message`. Answers `output` and `variables`.",
  input: {
    flowId: z.string().min(1).describe("The Flow's id or exact name."),
    inputs: operationArgument(runFlowOperation, "inputs").optional().describe("The answers keyed by parameter name."),
    message: operationArgument(runFlowOperation, "message").optional().describe("For a Flow without questions."),
    conversationId: operationArgument(runFlowOperation, "conversationId").optional().describe("For a Flow without questions: continues a conversation.")
  },
  operation: runFlowOperation,
  output: camelRunReply,
  ownArguments: { flowId: idOrName },
  run: true,
  handler: (args, { principal }) => Effect.flatMap(flowIdOf(principal, args.flowId, "published"), (id) => flowRun(principal, id, args, false))
})

const getExecution = tool({
  name: "get_execution",
  description: "An execution: what ran, steps, tools called (without their arguments in the default summary view; `view: \"full\"` includes them), credits, timings.",
  input: { executionId: operationArgument(executionOperation, "id").describe("The execution's id (REST's `id` path parameter)."), view: z.enum(["summary", "full"]).optional().describe("`summary` (default) or `full`.") },
  operation: executionOperation,
  ownArguments: {
    executionId: "REST's `id` path parameter (its bounds taken from it), named as answers name it (`executionId`)",
    view: "MCP's views: `summary` by default and `full` on request, where REST answers in full unless `view=summary`"
  },
  handler: (args, { principal }) =>
    Effect.map(Effect.flatMap(RunService, (runs) => runs.execution(principal, args.executionId, args.view !== "full")), (found) => ({ execution: found }))
})

/** The `run` family's tools. */
export const runTools = [listAgents, runAgent, listFlows, runFlow, getExecution] as const
