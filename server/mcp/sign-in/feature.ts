/**
 * The services of MCP sign-in connections (client registration, the sign-in pages, tokens and
 * sessions), served in front of the API by `http.ts` and used by MCP authentication and the admin
 * commands; no REST endpoints, so not a feature of `server/features.ts`.
 */
import { Layer } from "effect"
import { McpApproval } from "./approval.js"
import { McpSignInRepo } from "../../identity/mcp-sign-in/repo.js"
import { McpSessionRepo } from "../../identity/mcp-sign-in/session-repo.js"
import { McpSessions } from "../../identity/mcp-sign-in/sessions.js"

/** MCP sign-in's services over the core's database and clock. */
export const McpSignInLive = Layer.mergeAll(McpApproval.Default, McpSessions.Default, McpSignInRepo.Default, McpSessionRepo.Default)
