/**
 * Who an MCP request acts as. Every connection is a person: a sign-in connection (an access token
 * of MCP sign-in, resolved by `McpSessions.authenticate`: bound to the address it was approved at,
 * ended sessions and members who left refused) or a personal key as bearer token (the same key
 * lookup as REST, `AccountsService.authenticate`). Then the MCP rules in order: organization keys
 * refused, the workspace of a slug address, the plan, the `mcp` gate.
 */
import { Effect } from "effect"
import { mcpPlans, type Principal } from "../identity/domain.js"
import { AccountsService } from "../identity/service.js"
import { FeatureNotAvailable, InsufficientScope, NotFound, Unauthorized } from "../platform/errors.js"
import { bearerToken, gateError } from "../http/authentication.js"
import type { McpAddress } from "../identity/mcp-sign-in/address.js"
import { addressPath, isAccessToken } from "../identity/mcp-sign-in/domain.js"
import { McpSessions } from "../identity/mcp-sign-in/sessions.js"

export type { McpAddress } from "../identity/mcp-sign-in/address.js"

/** Whether the organization may run Agents, Flows and Apps over MCP: not on a trial before the first payment. */
export const runsAllowedFor = (principal: Principal): boolean => principal.organization.plan !== "trial"

/**
 * The principal of an MCP request, or why not: 401 `unauthorized`/`invalid_api_key`/`api_key_revoked`,
 * 403 `insufficient_scope` for an organization key, 404 `not_found` for a slug address of another
 * workspace (as for any object outside the caller's organization), 403 `feature_not_available`
 * for a plan without MCP, 403 `api_disabled` while the `mcp` gate is off.
 */
export const authenticateMcp = (authorization: string | undefined, address: McpAddress) =>
  Effect.gen(function* () {
    const token = bearerToken(authorization)
    if (token === null) {
      return yield* new Unauthorized({ message: "Send a personal API key (or a sign-in token) in the header 'Authorization: Bearer <token>'." })
    }
    const principal = isAccessToken(token)
      ? yield* (yield* McpSessions).authenticate(token, addressPath(address))
      : yield* (yield* AccountsService).authenticate(token)
    const org = principal.organization
    if (principal.key.kind !== "personal" || principal.member === null) {
      return yield* new InsufficientScope({ message: "Organization keys are not accepted by the MCP server: every connection is a person. Use a personal key." })
    }
    if (address.kind === "workspace" && address.slug !== org.slug) {
      return yield* new NotFound({ message: `No workspace '${address.slug}' for this key: it acts in '${org.slug}' (use /mcp or that workspace's address).` })
    }
    if (!mcpPlans.includes(org.plan) && org.plan !== "trial") {
      return yield* new FeatureNotAvailable({ message: `The MCP server is on the Creator, Pro, Agency and lifetime plans; this organization is on ${org.plan}.` })
    }
    if (!org.gates.has("mcp")) return yield* gateError("mcp")
    return principal
  })
