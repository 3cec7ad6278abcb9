/** Whether a caller may use a tool now: its gate is on and the caller's current scopes admit it. */
import type { Principal } from "../identity/domain.js"
import { scopeRefusal } from "../http/authentication.js"
import type { McpTool } from "./tool.js"

/** Whether `principal` may use something needing `scopes` (any one) behind `gate`. */
export const admits = (principal: Principal, candidate: Pick<McpTool, "scopes" | "gate">): boolean =>
  (candidate.gate === undefined || principal.organization.gates.has(candidate.gate)) &&
  (candidate.scopes.length === 0 || scopeRefusal(principal, candidate.scopes) === null)
