/**
 * Set-up for the provisioning suites: tier plans through the plan service (as `svc plans create`
 * does), Portals by the CLI (`svc portals create`), Suites through their service, rows the API of
 * this branch cannot make (end users in a given state, subscriptions, user groups, grant targets)
 * written through the admin handle, and counts of every provisioning table read straight from the
 * database, to prove a refused request wrote nothing.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { TierPlanService } from "../../server/provisioning/plans/service.js"
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

/** Creates a plan (with its plan group) in an organization. */
export const createPlan = async (server: TestServer, name: string, credits = 100, org = "default") => {
  const orgId = await organizationId(server, org)
  return server.admin(Effect.flatMap(TierPlanService, (plans) => plans.create(orgId, { name, creditAllowance: credits })))
}

/** Archives a plan. */
export const archivePlan = async (server: TestServer, id: string, org = "default") => {
  const orgId = await organizationId(server, org)
  return server.admin(Effect.flatMap(TierPlanService, (plans) => plans.archive(orgId, id)))
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

/** Inserts a user group (not a plan group) and answers its id. */
export const createGroup = async (server: TestServer, name: string, org = "default"): Promise<string> => {
  const orgId = await organizationId(server, org)
  const id = randomUUID()
  const at = new Date(server.clock.now()).toISOString()
  await sql(server, (db) => db`INSERT INTO user_groups (id, organization_id, name, description, plan_id, created_at, updated_at)
    VALUES (${id}, ${orgId}, ${name}, NULL, NULL, ${at}, ${at})`)
  return id
}

/** Inserts a row of `apps`, `agents`, `flows` or `suites` (a grant target) and answers its id. */
export const createTarget = async (server: TestServer, table: "apps" | "agents" | "flows" | "suites", org = "default"): Promise<string> => {
  const orgId = await organizationId(server, org)
  const id = randomUUID()
  const at = new Date(server.clock.now()).toISOString()
  if (table === "suites") {
    await sql(server, (db) => db`INSERT INTO suites (id, organization_id, name, created_at) VALUES (${id}, ${orgId}, 'Suite', ${at})`)
  } else {
    await sql(server, (db) => db`INSERT INTO ${db(table)} (id, organization_id, name, description, created_at, updated_at)
      VALUES (${id}, ${orgId}, 'Target', '', ${at}, ${at})`)
  }
  return id
}

/** The tables provisioning writes. */
const provisioningTables = [
  "user_groups",
  "group_members",
  "group_grants",
  "end_users",
  "end_user_grants",
  "portal_admissions",
  "outbox_emails",
  "subscriptions"
] as const

/** Row counts of every table provisioning writes, to prove a refused request wrote nothing. */
export const provisioningCounts = async (server: TestServer): Promise<Record<(typeof provisioningTables)[number], number>> => {
  const counts = {} as Record<(typeof provisioningTables)[number], number>
  for (const table of provisioningTables) {
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

/** The state of an email's account, straight from the database (null: none). */
export const stateOf = async (server: TestServer, email: string): Promise<string | null> => {
  const rows = await sql(server, (db) => db<{ state: string }>`SELECT state FROM end_users WHERE email_key = ${email.toLowerCase()}`)
  return rows[0]?.state ?? null
}
