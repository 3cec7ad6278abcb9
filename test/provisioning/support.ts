/**
 * Set-up for the provisioning suites: tier plans and Portals by the CLI (`svc plans create`, `svc
 * portals create`), Suites through their service, rows the API of this branch cannot make (end users
 * in a given state, subscriptions) written through the admin handle, and counts read straight from
 * the database.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { SuiteService } from "../../server/provisioning/suites/service.js"
import { organizationId, sql } from "../support/fixtures.js"
import type { TestServer } from "../support/server.js"
import { svcJson } from "../cli/helpers.js"

const at = () => new Date().toISOString()

/** Inserts an end user; answers its id. */
export const insertEndUser = async (
  server: TestServer,
  options: { readonly email: string; readonly state?: "active" | "pending" | "revoked" | "deleted"; readonly org?: string }
): Promise<string> => {
  const org = await organizationId(server, options.org ?? "default")
  const id = randomUUID()
  const now = at()
  await sql(
    server,
    (db) => db`INSERT INTO end_users (id, organization_id, email, email_key, full_name, state, created_at, updated_at)
      VALUES (${id}, ${org}, ${options.email}, ${options.email.trim().toLowerCase()}, NULL, ${options.state ?? "active"}, ${now}, ${now})`
  )
  return id
}

/** Creates a tier plan (with its plan group) by `svc plans create`; answers both ids. */
export const insertPlan = async (
  server: TestServer,
  options: { readonly name: string; readonly org?: string; readonly credits?: number }
): Promise<{ planId: string; groupId: string }> => {
  const args = ["plans", "create", "--org", options.org ?? "default", "--name", options.name, "--credits", String(options.credits ?? 100)]
  const { tierPlan } = await svcJson(args, server.dataDir)
  return { planId: tierPlan.id, groupId: tierPlan.groupId }
}

/** Gives an end user a plan (a subscription with its credit pool); answers the subscription id. */
export const subscribe = async (server: TestServer, endUserId: string, planId: string, org = "default"): Promise<string> => {
  const orgId = await organizationId(server, org)
  const id = randomUUID()
  const now = at()
  await sql(
    server,
    (db) => db`INSERT INTO subscriptions (id, organization_id, end_user_id, tier_plan_id, status, credit_allowance, credits_used,
        bonus_credits, credits_reset_at, created_at)
      VALUES (${id}, ${orgId}, ${endUserId}, ${planId}, 'active', 100, 7, 3, ${now}, ${now})`
  )
  return id
}

/** Creates a Portal by `svc portals create`; answers its id. */
export const insertPortal = async (server: TestServer, options: { readonly name: string; readonly org?: string }): Promise<string> =>
  (await svcJson(["portals", "create", "--org", options.org ?? "default", "--name", options.name], server.dataDir)).portal.id

/** Creates a Suite through its service; answers its id. */
export const createSuite = async (server: TestServer, name: string, appIds: ReadonlyArray<string>, org = "default"): Promise<string> => {
  const orgId = await organizationId(server, org)
  const suite = await server.admin(Effect.flatMap(SuiteService, (suites) => suites.create(orgId, { name, appIds })))
  return suite.id
}

/** Creates an App, an Agent and a Flow through the API with `key`; answers their ids. */
export const createTargets = async (server: TestServer, key?: string) => {
  const options = key === undefined ? {} : { key }
  const app = await server.request("POST", "/apps", { ...options, body: { name: "Desk" } })
  const agent = await server.request("POST", "/agents", { ...options, body: { name: "Helper" } })
  const flow = await server.request("POST", "/flows", { ...options, body: { name: "Quote", questions: [], steps: [], output: "Hello" } })
  if (app.status !== 201 || agent.status !== 201 || flow.status !== 201) {
    throw new Error(`targets not created: ${app.text} ${agent.text} ${flow.text}`)
  }
  return { appId: app.body.app.id as string, agentId: agent.body.agent.id as string, flowId: flow.body.flow.id as string }
}

/** Row counts of the provisioning tables, to prove a refused request wrote nothing. */
export const provisioningCounts = async (server: TestServer) => {
  const tables = ["user_groups", "group_members", "group_grants", "end_users", "portal_admissions", "outbox_emails", "subscriptions"] as const
  const counts: Record<string, number> = {}
  for (const table of tables) {
    const rows = await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM ${db(table)}`)
    counts[table] = Number(rows[0]?.n ?? 0)
  }
  return counts
}

/** Sets the `groups` gate of an organization. */
export const setGroupsGate = async (server: TestServer, on: boolean, org = "default") => {
  const { AccountsService } = await import("../../server/identity/service.js")
  await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization(org, on ? { enable: ["groups"] } : { disable: ["groups"] })))
}
