/** The names of the MCP tool families, chosen with `?tools=` (spec: MCP server), in the order the spec names them. */
export const familyNames = ["run", "authoring", "knowledge", "provisioning", "agents"] as const

/** One family's name. */
export type FamilyName = (typeof familyNames)[number]

/** What each family offers, as `whoami` and the docs say it. */
export const familyDescriptions: Readonly<Record<FamilyName, string>> = {
  run: "Published Agents, Apps and Flows: list, run, read executions.",
  authoring: "Create and edit Agents, Flows and Apps; publish; draft runs; list drafts.",
  knowledge: "Knowledgebases: read, search, write, upload; your memories.",
  provisioning: "End users, user groups, grants, plans, Portals and admissions (admins).",
  agents: "One tool per published Agent, App and Flow while there are ten or fewer of a kind."
}
