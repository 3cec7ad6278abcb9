/** The names of the MCP tool families, chosen with `?tools=` (spec: MCP server), in the order the spec names them. */
export const familyNames = ["run", "authoring", "knowledge", "provisioning", "agents"] as const

/** One family's name. */
export type FamilyName = (typeof familyNames)[number]
