/**
 * Set-up for the provisioning suites: rows the API of this branch cannot make (end users in a given
 * state, tier plans with their plan groups, subscriptions, Portals) written through the admin handle,
 * Suites through their service, and counts read straight from the database.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { SuiteService } from "../../server/provisioning/suites/service.js"
import { organizationId, sql } from "../support/fixtures.js"
import type { TestServer } from "../support/server.js"

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

/** Inserts a tier plan with its plan group; answers both ids. */
export const insertPlan = async (
  server: TestServer,
  options: { readonly name: string; readonly org?: string }
): Promise<{ planId: string; groupId: string }> => {
  const org = await organizationId(server, options.org ?? "default")
  const planId = randomUUID()
  const groupId = randomUUID()
  const now = at()
  await sql(server, (db) =>
    Effect.zipRight(
      db`INSERT INTO user_groups (id, organization_id, name, description, plan_id, created_at, updated_at)
        VALUES (${groupId}, ${org}, ${options.name}, NULL, ${planId}, ${now}, ${now})`,
      db`INSERT INTO tier_plans (id, organization_id, name, credit_allowance, group_id, created_at)
        VALUES (${planId}, ${org}, ${options.name}, 100, ${groupId}, ${now})`
    )
  )
  return { planId, groupId }
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

/** Inserts a Portal; answers its id. */
export const insertPortal = async (server: TestServer, options: { readonly name: string; readonly org?: string }): Promise<string> => {
  const org = await organizationId(server, options.org ?? "default")
  const id = randomUUID()
  await sql(server, (db) => db`INSERT INTO portals (id, organization_id, name, created_at) VALUES (${id}, ${org}, ${options.name}, ${at()})`)
  return id
}

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
  const { AccountsService } = await import("../../server/platform/accounts/service.js")
  await server.admin(Effect.flatMap(AccountsService, (a) => a.setOrganization(org, on ? { enable: ["groups"] } : { disable: ["groups"] })))
}
