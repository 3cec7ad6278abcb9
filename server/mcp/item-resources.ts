/**
 * Published Agents, Flows and Apps as resources, `svc://agents/<id>`, `svc://flows/<id>` and
 * `svc://apps/<id>`: each read as REST's `GET /agents/{id}` (…) answers it, through the same
 * service, and completed to the ids of the published items the caller may read (their lists'
 * published items, by id, name prefix or name). Not listed (`list_agents` and `list_flows` are);
 * they come with the families that run, author or call them (`run`, `authoring`, `agents`).
 */
import { Effect } from "effect"
import { pageSize } from "../platform/pagination.js"
import { AgentsApi } from "../builder/agents/api.js"
import { AgentService } from "../builder/agents/service.js"
import { AppsApi } from "../builder/apps/api.js"
import { AppService } from "../builder/apps/service.js"
import { FlowsApi } from "../builder/flows/api.js"
import { FlowService } from "../builder/flows/service.js"
import type { FamilyName } from "../mcp-door/family-names.js"
import { operation } from "../mcp-door/operation.js"
import { collectAll } from "../mcp-door/resolve.js"
import { agentTemplate, appTemplate, flowTemplate } from "../mcp-door/resource-uris.js"
import { completing, type ResourceKind, valueOf } from "./resource-kind.js"

/** The families published items come with. */
const itemFamilies: ReadonlyArray<FamilyName> = ["run", "authoring", "agents"]

const published = { includeDrafts: false, updatedSince: null, limit: pageSize.max } as const

/** Published Agents. */
export const agentResourceKind: ResourceKind = {
  name: "agent",
  template: agentTemplate,
  title: "Published Agent",
  description: "A published Agent as it runs, as JSON (`{agent}`, as `GET /agents/{id}` answers).",
  mimeType: "application/json",
  operation: operation(AgentsApi, "get"),
  families: itemFamilies,
  read: (call, values) => Effect.map(Effect.flatMap(AgentService, (agents) => agents.get(call.principal, valueOf(values, "agentId"))), (agent) => JSON.stringify({ agent })),
  complete: {
    agentId: (call, value) => completing(value, collectAll((cursor) => Effect.flatMap(AgentService, (agents) => agents.list(call.principal, { ...published, cursor }))))
  }
}

/** Published Flows. */
export const flowResourceKind: ResourceKind = {
  name: "flow",
  template: flowTemplate,
  title: "Published Flow",
  description: "A published Flow with its questions, as JSON (`{flow}`, as `GET /flows/{id}` answers).",
  mimeType: "application/json",
  operation: operation(FlowsApi, "get"),
  families: itemFamilies,
  read: (call, values) => Effect.map(Effect.flatMap(FlowService, (flows) => flows.get(call.principal, valueOf(values, "flowId"))), (flow) => JSON.stringify({ flow })),
  complete: {
    flowId: (call, value) => completing(value, collectAll((cursor) => Effect.flatMap(FlowService, (flows) => flows.list(call.principal, { ...published, cursor }))))
  }
}

/** Published Apps (behind the organization's `apps` gate, as their REST read is). */
export const appResourceKind: ResourceKind = {
  name: "app",
  template: appTemplate,
  title: "Published App",
  description: "A published App, as JSON (`{app}`, as `GET /apps/{id}` answers).",
  mimeType: "application/json",
  operation: operation(AppsApi, "get"),
  families: itemFamilies,
  read: (call, values) => Effect.map(Effect.flatMap(AppService, (apps) => apps.get(call.principal, valueOf(values, "appId"))), (app) => JSON.stringify({ app })),
  complete: {
    appId: (call, value) => completing(value, collectAll((cursor) => Effect.flatMap(AppService, (apps) => apps.list(call.principal, { ...published, cursor }))))
  }
}
