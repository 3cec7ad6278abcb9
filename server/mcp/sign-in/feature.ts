/** The `mcpSignIn` feature: MCP sign-in connections (served in front of the API by `http.ts`; no REST endpoints). */
import { Layer } from "effect"
import { defineFeature } from "../../platform/feature.js"
import { featureContract } from "../../platform/http/contract.js"
import { McpApproval } from "./approval.js"
import { McpSignInRepo } from "./repo.js"
import { McpSessionRepo } from "./session-repo.js"
import { McpSessions } from "./sessions.js"

/** MCP sign-in: client registration, the sign-in pages, tokens and sessions. */
export const mcpSignInFeature = defineFeature({
  name: "mcpSignIn",
  contract: featureContract(),
  http: Layer.empty,
  services: Layer.mergeAll(McpApproval.Default, McpSessions.Default, McpSignInRepo.Default, McpSessionRepo.Default)
})
