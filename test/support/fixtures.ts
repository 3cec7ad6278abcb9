/**
 * Shared fixtures for the HTTP suites: error-envelope assertions, direct data set-up through the
 * admin handle (rows the API cannot make yet, or too many to make through it), and organizations on
 * plans without organization keys.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import type { Plan, Role } from "../../server/identity/domain.js"
import { AccountsService, type CreatedKey, type KeyRequest } from "../../server/identity/service.js"
import { writesEveryTable, writing } from "../../server/platform/sql/write-declaration.js"
import type { TestResponse, TestServer } from "./server.js"

/** The request id format every response carries (docs/decisions.md). */
export const requestIdPattern = /^req_[0-9a-f]{32}$/

/** Asserts the `{error:{code,message}}` envelope with `status` and `code`, and an `X-Request-Id`. */
export const expectError = (response: TestResponse, status: number, code: string): string => {
  expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status, code })
  expect(response.body).toEqual({ error: { code, message: expect.any(String) } })
  expect(response.body.error.message.length).toBeGreaterThan(0)
  expect(response.headers.get("content-type") ?? "").toMatch(/^application\/json/)
  expect(response.headers.get("x-request-id") ?? "").toMatch(requestIdPattern)
  return response.body.error.message as string
}

/** A UUID that names nothing. */
export const unknownId = (): string => randomUUID()

/**
 * Runs SQL on the server's database through the admin handle. A fixture's hand-written rows are no
 * repository's: its writes count as writes of every table (`write-declaration.ts`).
 */
export const sql = <A>(server: TestServer, run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>): Promise<A> =>
  server.admin(writing(writesEveryTable)(Effect.flatMap(SqlClient.SqlClient, run)))

/** The id of an organization. */
export const organizationId = async (server: TestServer, slug = "default"): Promise<string> =>
  (await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.organization(slug)))).id

/** How many Knowledgebases an organization holds, read straight from the database. */
export const countKnowledgebases = async (server: TestServer, slug = "default"): Promise<number> => {
  const orgId = await organizationId(server, slug)
  const rows = await sql(server, (db) => db<{ n: number }>`SELECT count(*) AS n FROM knowledgebases WHERE organization_id = ${orgId}`)
  return rows[0]?.n ?? 0
}

/** A Knowledgebase row as a fixture knows it. */
export interface KnowledgebaseFixture {
  readonly id: string
  readonly name: string
  readonly createdAt: string
}

/**
 * Inserts `count` Knowledgebases directly (no plan cap). Item `i` is created at `start + step(i)`
 * milliseconds, so several may share a timestamp.
 */
export const insertKnowledgebases = async (
  server: TestServer,
  options: { readonly org?: string; readonly count: number; readonly start?: string; readonly step?: (i: number) => number; readonly prefix?: string }
): Promise<Array<KnowledgebaseFixture>> => {
  const orgId = await organizationId(server, options.org ?? "default")
  const start = Date.parse(options.start ?? "2026-01-01T00:00:00.000Z")
  const step = options.step ?? ((i: number) => i)
  const rows = Array.from({ length: options.count }, (_, i) => {
    const at = new Date(start + step(i)).toISOString()
    return {
      id: randomUUID(),
      organization_id: orgId,
      name: `${options.prefix ?? "KB"} ${i}`,
      description: "",
      created_at: at,
      updated_at: at
    }
  })
  if (rows.length > 0) await sql(server, (db) => db`INSERT INTO knowledgebases ${db.insert(rows)}`)
  return rows.map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at }))
}

/** Inserts Agents directly (published unless told otherwise, with a version 1 row), oldest first. */
export const insertAgents = async (
  server: TestServer,
  options: { readonly org?: string; readonly count: number; readonly published?: boolean; readonly prefix?: string }
): Promise<Array<{ id: string; name: string; description: string }>> => {
  const orgId = await organizationId(server, options.org ?? "default")
  const start = Date.parse("2026-01-01T00:00:00.000Z")
  const rows = Array.from({ length: options.count }, (_, i) => {
    const at = new Date(start + i).toISOString()
    return {
      id: randomUUID(),
      organization_id: orgId,
      name: `${options.prefix ?? "Agent"} ${i}`,
      description: `Agent number ${i}`,
      published_version: options.published === false ? null : 1,
      created_at: at,
      updated_at: at
    }
  })
  if (rows.length > 0) await sql(server, (db) => db`INSERT INTO agents ${db.insert(rows)}`)
  const versions = rows
    .filter((row) => row.published_version !== null)
    .map((row) => ({ agent_id: row.id, version: 1, name: row.name, description: row.description, definition: "{}", published_at: row.created_at }))
  if (versions.length > 0) await sql(server, (db) => db`INSERT INTO agent_versions ${db.insert(versions)}`)
  return rows.map(({ id, name, description }) => ({ id, name, description }))
}

/** Creates a key and returns both its record and its secret. */
export const createKeyRecord = (server: TestServer, request: KeyRequest & { org?: string }): Promise<CreatedKey> => {
  const { org = "default", ...rest } = request
  return server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.createKey(org, rest)))
}

/** Adds a member with `role` and gives them a personal key; returns the key's secret. */
export const personalKey = async (
  server: TestServer,
  options: { readonly email: string; readonly role: Role; readonly scopes?: KeyRequest["scopes"]; readonly org?: string }
): Promise<string> => {
  await server.addMember(options.email, options.role, options.org ?? "default")
  return server.createKey({
    name: `personal ${options.email}`,
    scopes: options.scopes ?? "all",
    personalFor: options.email,
    org: options.org ?? "default"
  })
}

/**
 * An organization on any plan (organization keys exist only on Pro and Agency), reached through
 * an admin member's all-scopes personal key, whose secret is returned.
 */
export const organizationWithPersonalKey = async (
  server: TestServer,
  slug: string,
  plan: Plan,
  options: { readonly role?: Role; readonly scopes?: KeyRequest["scopes"] } = {}
): Promise<string> => {
  await server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.createOrganization({ slug, plan })))
  return personalKey(server, {
    org: slug,
    email: `owner@${slug}.test`,
    role: options.role ?? "admin",
    ...(options.scopes === undefined ? {} : { scopes: options.scopes })
  })
}

/** Sets an organization's plan. */
export const setPlan = (server: TestServer, slug: string, plan: Plan) =>
  server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization(slug, { plan })))

/** Every Knowledgebase an API key can list, walking all pages. */
export const listAllKnowledgebases = async (server: TestServer, key?: string): Promise<Array<any>> => {
  const all: Array<any> = []
  let cursor: string | null = null
  do {
    const query: string = cursor === null ? "?limit=200" : `?limit=200&cursor=${encodeURIComponent(cursor)}`
    const page = await server.request("GET", `/knowledgebases${query}`, key === undefined ? {} : { key })
    expect(page.status).toBe(200)
    all.push(...page.body.knowledgebases)
    cursor = page.body.nextCursor
  } while (cursor !== null)
  return all
}
