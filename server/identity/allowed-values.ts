/**
 * The values an organization's plan, its feature gates, a member's role and a key's scopes may
 * take, as plain lists: `domain.ts` builds its schemas from them, and the CLI's commands read them
 * for their option help and checks without loading effect.
 */

/** Organization plans (conventions: Organization settings). */
export const plans = ["trial", "creator", "pro", "agency", "lifetime"] as const

/** Feature gates an organization may have switched on. */
export const gates = ["apps", "groups", "mcp", "review"] as const

/** Member roles, weakest first. */
export const roles = ["viewer", "member", "admin"] as const

/** Every scope with the weakest role a personal key's member needs to use it (spec: Authentication 5). */
export const scopeMinimumRole = {
  "agents:read": "viewer",
  "agents:execute": "viewer",
  "agents:write": "member",
  "flows:read": "viewer",
  "flows:execute": "viewer",
  "flows:write": "member",
  "apps:read": "viewer",
  "apps:execute": "viewer",
  "apps:write": "member",
  "knowledge:read": "viewer",
  "knowledge:write": "member",
  "end_users:read": "admin",
  "end_users:write": "admin"
} as const satisfies Record<string, (typeof roles)[number]>

/** A scope an API key may hold. */
export type ApiScope = keyof typeof scopeMinimumRole

/** Every scope, in the order `scopeMinimumRole` lists them. */
export const scopes = Object.keys(scopeMinimumRole) as ReadonlyArray<ApiScope>
