/**
 * The registry of tool families and the tool list of one caller: the core tools, then each selected
 * family's tools the caller's current scopes admit (so a role change shows on the next request).
 * Families are assembled from the feature list (`server/features.ts`): each feature's `mcp` part
 * tags its tools with their family, so a new feature is one entry there, for REST and MCP alike.
 */
import { Effect } from "effect"
import { publishedItems } from "../builder/versions/items-repo.js"
import { features } from "../features.js"
import { ReadConnection } from "../platform/sql/read-connection.js"
import { admits } from "../mcp-door/admits.js"
import { familyDescriptions, type FamilyName, familyNames } from "../mcp-door/family-names.js"
import type { FamilyTools } from "../mcp-door/family-tools.js"
import type { CallContext, McpTool } from "../mcp-door/tool.js"
import { coreTools } from "./core-tools.js"
import type { ToolFamily } from "./families.js"

/** Every feature's MCP tools, in the order of the feature list. */
const featureTools: ReadonlyArray<FamilyTools> = features.flatMap((feature): ReadonlyArray<FamilyTools> => feature.mcp)

/** Every family, in the order tools are listed: each the tools its features tag with its name, in the features' order. */
export const toolFamilies: ReadonlyArray<ToolFamily> = familyNames.map((name): ToolFamily => {
  const parts = featureTools.filter((part) => part.family === name)
  return {
    name,
    description: familyDescriptions[name],
    dynamic: parts.some((part) => part.dynamic === true),
    tools: (call) => Effect.map(Effect.forEach(parts, (part) => part.tools(call)), (lists) => lists.flat())
  }
})

/**
 * The published items of each organization as last read, under the data version of that reading,
 * kept per database (per read connection), so servers sharing a process never share readings.
 */
const publishedReadings = new WeakMap<object, Map<string, { readonly version: number; readonly signature: string }>>()

/**
 * Which Agents, Flows and Apps an organization has published, and at which versions (what the
 * per-item tools are built from), read again only when the data version moved since the last
 * reading. Other commits (activity, runs, uploads) then leave the tool list as it is.
 */
const publishedSignature = (organizationId: string) =>
  Effect.flatMap(ReadConnection, (reader) => {
    let publishedByOrganization = publishedReadings.get(reader)
    if (publishedByOrganization === undefined) {
      publishedByOrganization = new Map()
      publishedReadings.set(reader, publishedByOrganization)
    }
    const readings = publishedByOrganization
    const version = reader.dataVersion()
    const known = readings.get(organizationId)
    if (known !== undefined && known.version === version) return Effect.succeed(known.signature)
    return publishedItems(reader, organizationId)
      .pipe(
        Effect.map((rows) => {
          const signature = rows.map((row) => `${row.kind}:${row.id}:${row.version}`).join(",")
          if (readings.size > 10_000) readings.clear()
          readings.set(organizationId, { version, signature })
          return signature
        })
      )
  })

/**
 * What the tool list of `call` depends on: the key, role, scopes, plan, gates and families, and,
 * when a selected family follows the data, which items are published at which versions. The same
 * fingerprint means the same list, so a connection rebuilds its list only when this changes.
 */
export const listFingerprint = (call: CallContext) =>
  Effect.map(
    toolFamilies.some((family) => family.dynamic && call.families.has(family.name))
      ? publishedSignature(call.principal.organization.id)
      : Effect.succeed(""),
    (published) => {
      const { principal } = call
      const org = principal.organization
      return JSON.stringify([principal.key.id, principal.member?.role ?? null, [...principal.scopes].sort(), org.plan, [...org.gates].sort(), [...call.families].sort(), published])
    }
  )

/**
 * The tools offered to `call`, by name, and those its scopes admit but an organization gate hides
 * (`gatedOff`): not listed, and called they answer the gate's refusal (`groups_disabled`,
 * `api_disabled`) as their REST endpoints do.
 */
export const toolsFor = (call: CallContext) =>
  Effect.map(
    Effect.forEach(toolFamilies.filter((family) => call.families.has(family.name)), (family) =>
      Effect.map(family.tools(call), (tools) => ({ family: family.name, tools }))
    ),
    (lists) => {
      const offered = new Map<string, McpTool>()
      const gatedOff = new Map<string, McpTool>()
      const offeredFamilies = new Set<FamilyName>()
      for (const { family, tools } of [{ family: null, tools: coreTools }, ...lists]) {
        for (const candidate of tools) {
          if (admits(call.principal, candidate)) {
            offered.set(candidate.name, candidate)
            if (family !== null) offeredFamilies.add(family)
          } else if (candidate.gate !== undefined && admits(call.principal, { scopes: candidate.scopes })) gatedOff.set(candidate.name, candidate)
        }
      }
      return { offered, gatedOff, offeredFamilies }
    }
  )
