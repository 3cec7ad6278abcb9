/** The `agents` and `apps` features: what an organization builds and runs. */
import { defineFeature } from "../../platform/feature.js"
import { AgentsContract, AppsContract } from "./api.js"
import { AppService } from "../apps/service.js"
import { AgentsHttpLive, AppsHttpLive } from "./http.js"
import { AgentService } from "./service.js"

/** Agents. */
export const agentsFeature = defineFeature({
  name: "agents",
  contract: AgentsContract,
  http: AgentsHttpLive,
  services: AgentService.Default
})

/** Apps. */
export const appsFeature = defineFeature({
  name: "apps",
  contract: AppsContract,
  http: AppsHttpLive,
  services: AppService.Default
})
