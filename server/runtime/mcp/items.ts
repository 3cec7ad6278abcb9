/**
 * The `agents` family: one tool per published item while there are ten or fewer of its kind
 * (spec: Limits): `agent_<name>` and `app_<name>` take a message, `flow_<name>` takes the Flow's
 * questions as typed parameters (its `inputsSchema`, so clients validate before calling). Built
 * from the published lists on every request, so publishing shows on the next one.
 */
import { Effect } from "effect"
import * as z from "zod/v4"
import type { Principal } from "../../identity/domain.js"
import { AgentService } from "../../builder/agents/service.js"
import { AppService } from "../../builder/apps/service.js"
import type { Flow } from "../../builder/flows/domain.js"
import { FlowService } from "../../builder/flows/service.js"
import type { FamilyTools } from "../../mcp-door/family-tools.js"
import { admits } from "../../mcp-door/admits.js"
import { camelRunReply } from "../../mcp-door/output.js"
import { type McpTool, mcpTool, tool } from "../../mcp-door/tool.js"
import { agentConversationOperation, agentTurn, appConversationOperation, appTurn, flowRun, runFlowOperation, turnInput } from "./turns.js"

/** Dedicated tools are offered while a kind has at most this many published items. */
export const dedicatedToolsMax = 10

/** The longest tool name MCP clients commonly accept. */
const toolNameMax = 64

/**
 * `agent_<name>`: the name lower-cased, runs of other characters as `_`, at most 64 characters,
 * unique within the list: a name taken already ends in `_` and the start of the item's id, as much
 * of it as makes the name unique (the whole id at most).
 */
export const itemToolName = (prefix: string, name: string, id: string, taken: Set<string>): string => {
  const base = name.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "") || "item"
  const full = `${prefix}_${base}`
  let candidate = full.slice(0, toolNameMax)
  for (let length = 8; taken.has(candidate) && length < id.length + 4; length += 4) {
    const suffix = id.slice(0, length)
    candidate = `${full.slice(0, toolNameMax - suffix.length - 1)}_${suffix}`
  }
  taken.add(candidate)
  return candidate
}

const firstPage = { includeDrafts: false, updatedSince: null, limit: dedicatedToolsMax + 1 } as const

const upToTen = <A>(items: ReadonlyArray<A>): ReadonlyArray<A> => (items.length > dedicatedToolsMax ? [] : items)

const flowInput = (flow: Flow): McpTool["input"] =>
  flow.conversational ? turnInput : (z.fromJSONSchema(flow.inputsSchema as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodType)

/** Why a Flow tool's parameters are its own: the Flow's questions, which REST takes under `inputs`. */
const questionReason = "one of the Flow's own questions, a parameter REST takes under `inputs`"

/** `agent_<name>`: a turn with a published Agent. */
export const agentItemTool = (agent: { readonly id: string; readonly name: string; readonly description: string }, name: string): McpTool =>
  tool({
    name,
    title: `Agent: ${agent.name}`,
    description: `Talk to the Agent '${agent.name}'.${agent.description ? ` ${agent.description}` : ""}`,
    input: turnInput,
    operation: agentConversationOperation,
    output: camelRunReply,
    run: true,
    signature: `${agent.id}:${agent.name}:${agent.description}`,
    handler: (args, call) => agentTurn(call.principal, agent.id, args, false)
  })

/** `app_<name>`: a turn with a published App. */
export const appItemTool = (app: { readonly id: string; readonly name: string; readonly description: string }, name: string): McpTool =>
  tool({
    name,
    title: `App: ${app.name}`,
    description: `Talk to the App '${app.name}'.${app.description ? ` ${app.description}` : ""}`,
    input: turnInput,
    operation: appConversationOperation,
    output: camelRunReply,
    run: true,
    signature: `${app.id}:${app.name}:${app.description}`,
    handler: (args, call) => appTurn(call.principal, app.id, args, false)
  })

/** `flow_<name>`: a run of a published Flow, its questions as typed parameters (or a message, conversational). */
export const flowItemTool = (flow: Flow, name: string): McpTool => {
  const input = flowInput(flow)
  const parameters = Object.keys(((flow.inputsSchema as { properties?: object } | null)?.properties ?? {}) as object)
  return mcpTool<any>(
    {
      name,
      title: `Flow: ${flow.name}`,
      description: `Run the Flow '${flow.name}'.${flow.description ? ` ${flow.description}` : ""}`,
      input: {},
      operation: runFlowOperation,
      output: camelRunReply,
      ownArguments: flow.conversational ? {} : Object.fromEntries(parameters.map((parameter) => [parameter, questionReason])),
      run: true,
      literalArguments: !flow.conversational,
      signature: `${flow.id}:${flow.version}:${flow.name}`,
      handler: (args: Record<string, unknown>, call) =>
        flowRun(call.principal, flow.id, flow.conversational ? (args as { message: string; conversationId?: string }) : { inputs: args }, false)
    },
    input
  )
}

/** The dedicated tools of `actor`'s published items. */
const publishedItemTools = (actor: Principal) =>
  Effect.gen(function* () {
    const taken = new Set<string>()
    const tools: Array<McpTool> = []
    if (admits(actor, { scopes: agentConversationOperation.scopes })) {
      const agents = upToTen((yield* (yield* AgentService).list(actor, firstPage)).items)
      for (const agent of agents) tools.push(agentItemTool(agent, itemToolName("agent", agent.name, agent.id, taken)))
    }
    if (admits(actor, appConversationOperation)) {
      const apps = upToTen((yield* (yield* AppService).list(actor, firstPage)).items)
      for (const app of apps) tools.push(appItemTool(app, itemToolName("app", app.name, app.id, taken)))
    }
    if (admits(actor, { scopes: runFlowOperation.scopes })) {
      const flows = upToTen((yield* (yield* FlowService).list(actor, firstPage)).items) as ReadonlyArray<Flow>
      for (const flow of flows) tools.push(flowItemTool(flow, itemToolName("flow", flow.name, flow.id, taken)))
    }
    return tools.filter((candidate) => admits(actor, candidate))
  }).pipe(Effect.orElseSucceed(() => [] as Array<McpTool>))

/** The `agents` family: one tool per published Agent, App and Flow (ten or fewer of a kind), built for each caller. */
export const itemTools: FamilyTools = {
  family: "agents",
  dynamic: true,
  tools: (call) => publishedItemTools(call.principal)
}
