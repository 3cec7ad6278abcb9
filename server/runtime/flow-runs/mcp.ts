/**
 * The flow runs feature's MCP tools (the `run` family): published Flows listed and run, over the same
 * services as `GET /flows` and `POST /flows/{id}/run` (scopes, credits, executions).
 */
import { Effect } from "effect"
import * as z from "zod/v4"
import { flowFields } from "../../builder/flows/domain.js"
import { FlowsApi } from "../../builder/flows/api.js"
import { FlowService } from "../../builder/flows/service.js"
import { camelRunReply, itemsOf } from "../../mcp-door/output.js"
import { operation } from "../../mcp-door/operation.js"
import { listArguments, operationArgument } from "../../mcp-door/operation-arguments.js"
import { fieldsInput } from "../../mcp-door/shared-arguments.js"
import { fieldsList, idOrName, itemsPage, tool } from "../../mcp-door/tool.js"
import { flowIdOf } from "../../builder/mcp-ids.js"
import { flowRun, runFlowOperation } from "../mcp/turns.js"

const listFlowsOperation = operation(FlowsApi, "list")

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

/** The run family's Flow tools. */
export const flowRunTools = [listFlows, runFlow] as const
