/**
 * The builder features' MCP tools (the `authoring` family: the `:write` scopes, member role and
 * above): `save_agent`, `save_flow`, `save_app` (no id creates, an id updates the draft),
 * `publish_*`, `set_agent_knowledge` and `list_authored_*` (drafts included, with `updatedSince`),
 * over the builder services the REST endpoints use; bodies are checked by the same schemas. Each
 * kind's feature declares its own (`agentAuthoringTools`, …); the draft runs and checks are runs
 * (`server/runtime/mcp/draft-runs.ts`).
 */
import { Effect, Schema } from "effect"
import * as z from "zod/v4"
import { InvalidRequest } from "../platform/errors.js"
import { decodeBody } from "../platform/request/decode.js"
import { knowledgebaseIdOf } from "../knowledge/mcp-ids.js"
import { operation } from "../mcp-door/operation.js"
import { itemsOf, restBodyWith } from "../mcp-door/output.js"
import { idsOrNamesArgument, listArguments, operationArgument } from "../mcp-door/operation-arguments.js"
import { decodeUpdatedSince, fieldsInput, idsOf, updatedSinceInput } from "../mcp-door/shared-arguments.js"
import { fieldsList, idOrName, itemsPage, tool } from "../mcp-door/tool.js"
import { AgentsApi } from "./agents/api.js"
import { CreateAgent, PatchAgentDraft } from "./agents/domain.js"
import { AgentService } from "./agents/service.js"
import { AppsApi } from "./apps/api.js"
import { CreateApp, PatchAppDraft } from "./apps/domain.js"
import { AppService } from "./apps/service.js"
import { FlowsApi } from "./flows/api.js"
import { FlowService } from "./flows/service.js"
import { agentIdOf, appIdOf, draftIdOf, flowIdOf } from "./mcp-ids.js"
import { draftListFields } from "./versions/domain.js"

const createAgentOperation = operation(AgentsApi, "create")
const createFlowOperation = operation(FlowsApi, "create")
const createAppOperation = operation(AppsApi, "create")
const listOperation = { agents: operation(AgentsApi, "list"), flows: operation(FlowsApi, "list"), apps: operation(AppsApi, "list") } as const
const createOperation = { agents: createAgentOperation, flows: createFlowOperation, apps: createAppOperation } as const

const updateAgentOperation = operation(AgentsApi, "updateDraft")
const updateFlowOperation = operation(FlowsApi, "updateDraft")
const updateAppOperation = operation(AppsApi, "updateDraft")

/**
 * Why a list of ids or names is the tool's own: each item may be an exact name (no 100-character
 * bound), resolved to its id before REST's decode; the list is as long as REST's (`idsOrNamesArgument`).
 */
const namesReason = `${idOrName} each, as many as REST takes`

/** What a save adds to REST's body: whether it created the item (else it updated its draft). */
const Saved = Schema.Struct({ created: Schema.Boolean })

/** Only the arguments that were given (absent ones are left out of the body). */
const given = (args: Record<string, unknown>) => Object.fromEntries(Object.entries(args).filter(([, value]) => value !== undefined))

const saveAgent = tool({
  name: "save_agent",
  title: "Create or update an Agent",
  description: "Without `agentId`, create an Agent (`name` required). With `agentId`, update its draft (publish with `publish_agent`).",
  input: {
    agentId: z.string().min(1).optional().describe("The Agent to update (id or exact name); absent to create one."),
    name: operationArgument(createAgentOperation, "name").optional(),
    description: operationArgument(createAgentOperation, "description").optional(),
    instructions: operationArgument(createAgentOperation, "instructions").optional(),
    model: operationArgument(createAgentOperation, "model")
      .optional()
      .describe("`builtin` or a model of the server's OpenAI-compatible endpoint, kept as named; absent on create, or null, runs on the server's default model (resolved at run time)."),
    greeting: operationArgument(createAgentOperation, "greeting").optional().describe("Shown before the first turn; null for none."),
    knowledgebaseIds: idsOrNamesArgument(createAgentOperation, "knowledgebaseIds").optional().describe("Knowledgebases (ids or exact names) the Agent searches."),
    flowIds: idsOrNamesArgument(createAgentOperation, "flowIds").optional().describe("Published Flows (ids or exact names) the Agent may run as tools.")
  },
  operation: [createAgentOperation, updateAgentOperation],
  output: restBodyWith(Saved),
  ownArguments: { agentId: `${idOrName} (absent: an Agent is created)`, knowledgebaseIds: namesReason, flowIds: namesReason },
  handler: ({ agentId, ...args }, { principal }) =>
    Effect.gen(function* () {
      const agents = yield* AgentService
      const body = given({
        ...args,
        knowledgebaseIds: yield* idsOf(args.knowledgebaseIds, (one) => knowledgebaseIdOf(principal, one, "knowledgebaseIds")),
        flowIds: yield* idsOf(args.flowIds, (one) => flowIdOf(principal, one, "published", "flowIds"))
      })
      if (agentId === undefined) return { agent: yield* agents.create(principal, yield* decodeBody(CreateAgent)(body)), created: true }
      const id = yield* agentIdOf(principal, agentId, "drafts")
      return { agent: yield* agents.updateDraft(principal, id, yield* decodeBody(PatchAgentDraft)(body)), created: false }
    })
})

const saveFlow = tool({
  name: "save_flow",
  title: "Create or update a Flow",
  description:
    "Without `flowId`, create a Flow (`name`, `questions`, `steps`). With `flowId`, update its draft. Steps run in order and each binds a variable; `{{templates}}` use question parameters and earlier variables.",
  input: {
    flowId: z.string().min(1).optional().describe("The Flow to update (id or exact name); absent to create one."),
    name: operationArgument(createFlowOperation, "name").optional(),
    description: operationArgument(createFlowOperation, "description").optional(),
    questions: operationArgument(createFlowOperation, "questions").optional().describe("Each becomes a parameter named after its label (`Company name` -> `company_name`)."),
    steps: operationArgument(createFlowOperation, "steps").optional().describe("Run in order; each binds the variable `name` (a step `model` absent: the server's default model, resolved at run time)."),
    output: operationArgument(updateFlowOperation, "output")
      .optional()
      .describe("A template over inputs and step variables; default the last step's variable (null on an update: back to that default).")
  },
  operation: [createFlowOperation, updateFlowOperation],
  output: restBodyWith(Saved),
  ownArguments: { flowId: `${idOrName} (absent: a Flow is created)` },
  handler: ({ flowId, ...args }, { principal }) =>
    Effect.gen(function* () {
      const flows = yield* FlowService
      const body = given(args)
      if (flowId === undefined) return { flow: yield* flows.create(principal, body), created: true }
      const id = yield* flowIdOf(principal, flowId, "drafts")
      return { flow: yield* flows.updateDraft(principal, id, body), created: false }
    })
})

const saveApp = tool({
  name: "save_app",
  title: "Create or update an App",
  description: "Without `appId`, create an App (`name` required). With `appId`, update its draft, the Transaction Service (`api`) included.",
  input: {
    appId: z.string().min(1).optional().describe("The App to update (id or exact name); absent to create one."),
    name: operationArgument(createAppOperation, "name").optional(),
    description: operationArgument(createAppOperation, "description").optional(),
    greeting: operationArgument(createAppOperation, "greeting").optional().describe("Shown before the first turn; null for none."),
    agentIds: idsOrNamesArgument(createAppOperation, "agentIds").optional().describe("Published Agents (ids or exact names) the App routes to."),
    flowIds: idsOrNamesArgument(createAppOperation, "flowIds").optional().describe("Published Flows (ids or exact names) the App offers."),
    api: operationArgument(updateAppOperation, "api").optional().describe("The Transaction Service (updates only).")
  },
  operation: [createAppOperation, updateAppOperation],
  output: restBodyWith(Saved),
  ownArguments: { appId: `${idOrName} (absent: an App is created)`, agentIds: namesReason, flowIds: namesReason },
  handler: ({ appId, ...args }, { principal }) =>
    Effect.gen(function* () {
      const apps = yield* AppService
      const body = given({
        ...args,
        agentIds: yield* idsOf(args.agentIds, (one) => agentIdOf(principal, one, "published", "agentIds")),
        flowIds: yield* idsOf(args.flowIds, (one) => flowIdOf(principal, one, "published", "flowIds"))
      })
      if (appId === undefined) {
        if (body["api"] !== undefined) return yield* new InvalidRequest({ message: "api: set the Transaction Service on an existing App (give appId)." })
        return { app: yield* apps.create(principal, yield* decodeBody(CreateApp)(body)), created: true }
      }
      const id = yield* appIdOf(principal, appId, "drafts")
      return { app: yield* apps.updateDraft(principal, id, yield* decodeBody(PatchAppDraft)(body)), created: false }
    })
})


/** `publish_<kind>`: the draft becomes a new immutable numbered version; answers `{id, version, publishedAt}`. */
const publish = (kind: "agent" | "flow" | "app") =>
  tool({
    name: `publish_${kind}`,
    description: `Publish the draft of ${kind === "app" ? "an" : "a"} ${kind[0]!.toUpperCase()}${kind.slice(1)} as a new immutable numbered version; answers \`{id, version, publishedAt}\`.`,
    input: { id: z.string().min(1).describe("The item's id or exact name.") },
    operation: publishOperation[kind],
    ownArguments: { id: idOrName },
    handler: (args, { principal }) =>
      Effect.gen(function* () {
        const id = yield* draftIdOf(principal, kind, args.id)
        if (kind === "agent") return yield* (yield* AgentService).publish(principal, id)
        if (kind === "flow") return yield* (yield* FlowService).publish(principal, id)
        return yield* (yield* AppService).publish(principal, id)
      })
  })

/** Publishing each kind (`POST /{kind}s/{id}/publish`). */
const publishOperation = {
  agent: operation(AgentsApi, "publish"),
  flow: operation(FlowsApi, "publish"),
  app: operation(AppsApi, "publish")
} as const

/** The arguments of `list_authored_<kind>s`, as the kind's list takes them. */
const authoredInput = (kind: "agents" | "flows" | "apps") => ({
  updatedSince: updatedSinceInput(listOperation[kind]),
  ...listArguments(listOperation[kind]),
  fields: fieldsInput(draftListFields)
})

/** `list_authored_<kind>s`: every item, drafts included. */
const listAuthored = (kind: "agents" | "flows" | "apps") =>
  tool({
    name: `list_authored_${kind}`,
    title: `List authored ${kind} with drafts`,
    description: `Every ${kind.slice(0, -1)} with its draft (published or not), oldest first; \`updatedSince\` for polling.`,
    input: authoredInput(kind),
    operation: listOperation[kind],
    output: itemsOf(),
    scopeRule: {
      scopes: createOperation[kind].scopes,
      because: "drafts are listed (`include=drafts`), which the service admits with the kind's write scope only (builder/versions/operations.ts): the scope of its create"
    },
    ownArguments: { fields: fieldsList },
    handler: (args, { principal }) =>
      Effect.gen(function* () {
        const request = { includeDrafts: true, updatedSince: (yield* decodeUpdatedSince(args.updatedSince)) ?? null, limit: args.limit, cursor: args.cursor }
        const page =
          kind === "agents"
            ? yield* (yield* AgentService).list(principal, request)
            : kind === "flows"
              ? yield* (yield* FlowService).list(principal, request)
              : yield* (yield* AppService).list(principal, request)
        return itemsPage(page, args.fields)
      })
  })

/** `set_agent_knowledge`: the Knowledgebases an Agent's draft searches, replaced (publish to use them). */
export const setAgentKnowledge = tool({
  name: "set_agent_knowledge",
  title: "Set an Agent's Knowledgebases",
  description: "Set the Knowledgebases (ids or exact names; empty for none) the draft of an Agent searches; publish with `publish_agent` to use them in runs.",
  input: {
    agentId: z.string().min(1).describe("The Agent (id or exact name)."),
    knowledgebaseIds: idsOrNamesArgument(updateAgentOperation, "knowledgebaseIds")
  },
  operation: updateAgentOperation,
  ownArguments: { agentId: idOrName, knowledgebaseIds: `${idOrName} each, as many as REST takes` },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* agentIdOf(principal, args.agentId, "drafts")
      const knowledgebaseIds = yield* idsOf(args.knowledgebaseIds, (one) => knowledgebaseIdOf(principal, one, "knowledgebaseIds"))
      return { agent: yield* (yield* AgentService).updateDraft(principal, id, yield* decodeBody(PatchAgentDraft)({ knowledgebaseIds })) }
    })
})

/** The Agent's authoring tools (the agents feature). */
export const agentAuthoringTools = [saveAgent, publish("agent"), setAgentKnowledge, listAuthored("agents")] as const

/** The Flow's authoring tools (the flows feature). */
export const flowAuthoringTools = [saveFlow, publish("flow"), listAuthored("flows")] as const

/** The App's authoring tools (the apps feature). */
export const appAuthoringTools = [saveApp, publish("app"), listAuthored("apps")] as const
