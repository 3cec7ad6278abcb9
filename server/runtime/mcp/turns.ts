/**
 * A turn with an Agent or App, or a Flow run, as the run, authoring and per-item tools make them:
 * the same services and steps as `POST /agents/{id}/conversation`, `/apps/{id}/conversation` and
 * `/flows/{id}/run` (and their draft runs), without streaming, answered with camelCase names.
 */
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { decodeBody } from "../../platform/request/decode.js"
import { operation } from "../../mcp-door/operation.js"
import { operationArgument } from "../../mcp-door/operation-arguments.js"
import { camelReply } from "../../mcp-door/tool.js"
import { AppRunsApi } from "../app-runs/api.js"
import { AppRunService } from "../app-runs/service.js"
import { FlowRunsApi } from "../flow-runs/api.js"
import { FlowRunRequest } from "../flow-runs/domain.js"
import { FlowRunService } from "../flow-runs/service.js"
import { deliverWhole } from "../model.js"
import { RunsApi } from "../runs/api.js"
import { ConversationTurn } from "../runs/domain.js"
import { RunService } from "../runs/service.js"

/** `POST /agents/{id}/conversation`. */
export const agentConversationOperation = operation(RunsApi, "agentConversation")
/** `POST /apps/{id}/conversation`. */
export const appConversationOperation = operation(AppRunsApi, "appConversation")
/** `POST /flows/{id}/run`. */
export const runFlowOperation = operation(FlowRunsApi, "runFlow")
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

