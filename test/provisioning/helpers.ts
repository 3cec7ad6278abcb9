/**
 * Set-up for the provisioning suites: plans through the plan service (as `svc plans create` does),
 * groups, Suites and grant targets as rows (their own endpoints belong to other parts), and counts
 * of every provisioning table, to prove a refused request wrote nothing.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { TierPlanService } from "../../server/provisioning/plans/service.js"
import { organizationId, sql } from "../support/fixtures.js"
import type { TestServer } from "../support/server.js"

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

/** Row counts of every table provisioning writes. */
export const provisioningCounts = (server: TestServer) =>
  sql(server, (db) =>
    db<{ end_users: number; subscriptions: number; group_members: number; end_user_grants: number; outbox_emails: number }>`SELECT
      (SELECT count(*) FROM end_users) AS end_users,
      (SELECT count(*) FROM subscriptions) AS subscriptions,
      (SELECT count(*) FROM group_members) AS group_members,
      (SELECT count(*) FROM end_user_grants) AS end_user_grants,
      (SELECT count(*) FROM outbox_emails) AS outbox_emails`
  ).then((rows) => rows[0]!)

/** The state of an email's account, straight from the database (null: none). */
export const stateOf = async (server: TestServer, email: string): Promise<string | null> => {
  const rows = await sql(server, (db) => db<{ state: string }>`SELECT state FROM end_users WHERE email_key = ${email.toLowerCase()}`)
  return rows[0]?.state ?? null
}
