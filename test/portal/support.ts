/**
 * Set-up of the Portal suites: a cookie-keeping client of the Portal's pages (real socket), a
 * Portal with a published App granted to a plan's group and admitted there, end users holding
 * plans with given credit pools, and reads of the outbox.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import { PortalService } from "../../server/provisioning/portals/service.js"
import { WebhookService } from "../../server/webhooks/service.js"
import { organizationId, sql } from "../support/fixtures.js"
import type { TestServer } from "../support/server.js"
import { createPlan } from "../provisioning/support.js"
import { createAgent } from "../runtime/support.js"

/** One answer of the Portal. */
export interface PortalResponse {
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

/** A browser-like client of one Portal: keeps its cookies, fills in the CSRF field from the last page. */
export class PortalClient {
  readonly cookies = new Map<string, string>()
  lastPage = ""
  constructor(
    readonly server: TestServer,
    readonly portalId: string
  ) {}

  /** The Portal's base URL. */
  get base(): string {
    return `${this.server.origin}/portals/${this.portalId}/`
  }

  /** The CSRF token in the last page's forms. */
  get csrf(): string {
    return /name="csrf_token" value="([^"]+)"/.exec(this.lastPage)?.[1] ?? ""
  }

  private remember(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";")
      const at = pair!.indexOf("=")
      const name = pair!.slice(0, at)
      const value = pair!.slice(at + 1)
      if (/Max-Age=0/i.test(line)) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  /** A request to `path` (relative to the Portal), keeping cookies; redirects are not followed. */
  async send(method: "GET" | "POST", path: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<PortalResponse> {
    const response = await fetch(new URL(path, this.base), {
      method,
      redirect: "manual",
      headers: {
        ...(this.cookies.size === 0 ? {} : { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ") }),
        ...(form === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" }),
        ...headers
      },
      ...(form === undefined ? {} : { body: new URLSearchParams(form).toString() })
    })
    this.remember(response)
    const text = await response.text()
    if ((response.headers.get("content-type") ?? "").startsWith("text/html")) this.lastPage = text
    return { status: response.status, headers: response.headers, text }
  }

  /** GET a page. */
  get(path = ""): Promise<PortalResponse> {
    return this.send("GET", path)
  }

  /** POST a form with the current CSRF token. */
  post(path: string, form: Record<string, string> = {}): Promise<PortalResponse> {
    return this.send("POST", path, { csrf_token: this.csrf, ...form })
  }

  /** Asks for a code for `email` (loading the sign-in page first). */
  async requestCode(email: string): Promise<PortalResponse> {
    await this.get()
    return this.post("sign-in", { email })
  }

  /** Signs in with the newest code the outbox holds for `email`. */
  async signIn(email: string): Promise<PortalResponse> {
    await this.requestCode(email)
    const code = await latestCode(this.server, email)
    return this.post("verify", { email, code: code! })
  }
}

/** The code in the newest `sign_in_code` email to `email`, or null. */
export const latestCode = async (server: TestServer, email: string): Promise<string | null> => {
  const rows = await sql(server, (db) => db<{ body: string }>`SELECT body FROM outbox_emails WHERE recipient = ${email} AND kind = 'sign_in_code'
    ORDER BY created_at DESC, rowid DESC LIMIT 1`)
  return /\b(\d{6})\b/.exec(rows[0]?.body ?? "")?.[1] ?? null
}

/** The outbox rows to `email`, by kind. */
export const emailsTo = (server: TestServer, email: string) =>
  sql(server, (db) => db<{ kind: string; body: string }>`SELECT kind, body FROM outbox_emails WHERE recipient = ${email} ORDER BY created_at, rowid`)

/** Creates a Portal; answers its id. */
export const createPortal = async (server: TestServer, name: string): Promise<string> => {
  const org = await organizationId(server)
  return (await server.admin(Effect.flatMap(PortalService, (portals) => portals.create(org, { name })))).id
}

/** Enables the Portal's signup webhook (to an address nobody answers: only the recorded deliveries matter). */
export const enableWebhook = async (server: TestServer, portalId: string) => {
  const org = await organizationId(server)
  await server.admin(Effect.flatMap(WebhookService, (hooks) => hooks.configure(org, portalId, { url: "http://127.0.0.1:9/hook", enabled: true })))
}

/** Creates and publishes an App answered by one new Agent; answers its id. */
export const publishedApp = async (server: TestServer, name: string, description = ""): Promise<string> => {
  const agent = await createAgent(server, { name: `${name} agent`, description: "Answers everything." })
  const created = await server.request("POST", "/apps", { body: { name, description, agentIds: [agent] } })
  expect(created.status).toBe(201)
  const id = created.body.app.id as string
  expect((await server.request("POST", `/apps/${id}/publish`)).status).toBe(200)
  return id
}

/** Inserts a row of a provisioning table. */
const at = () => new Date().toISOString()

/** Grants `appId` to `groupId`. */
export const grant = async (server: TestServer, groupId: string, appId: string) => {
  const org = await organizationId(server)
  await sql(server, (db) => db`INSERT INTO group_grants (id, organization_id, group_id, target_kind, target_id, created_at)
    VALUES (${randomUUID()}, ${org}, ${groupId}, 'app', ${appId}, ${at()})`)
}

/** Admits `groupId` at the Portal. */
export const admit = async (server: TestServer, portalId: string, groupId: string) => {
  const org = await organizationId(server)
  await sql(server, (db) => db`INSERT INTO portal_admissions (portal_id, group_id, organization_id, created_at) VALUES (${portalId}, ${groupId}, ${org}, ${at()})`)
}

/** A plan (with its group) of `credits` allowance. */
export const plan = (server: TestServer, name: string, credits = 10) => createPlan(server, name, credits)

/** Inserts an end user; answers its id. */
export const endUser = async (server: TestServer, email: string, state: "active" | "pending" | "revoked" | "deleted" = "active"): Promise<string> => {
  const org = await organizationId(server)
  const id = randomUUID()
  await sql(server, (db) => db`INSERT INTO end_users (id, organization_id, email, email_key, full_name, state, created_at, updated_at)
    VALUES (${id}, ${org}, ${email}, ${email.toLowerCase()}, NULL, ${state}, ${at()}, ${at()})`)
  return id
}

/** Gives an end user a plan with the given pools; answers the subscription id. */
export const subscribe = async (
  server: TestServer,
  endUserId: string,
  planId: string,
  pools: { readonly allowance: number; readonly used?: number; readonly bonus?: number; readonly createdAt?: string }
): Promise<string> => {
  const org = await organizationId(server)
  const id = randomUUID()
  const created = pools.createdAt ?? at()
  await sql(server, (db) => db`INSERT INTO subscriptions (id, organization_id, end_user_id, tier_plan_id, status, credit_allowance, credits_used,
      bonus_credits, credits_reset_at, created_at)
    VALUES (${id}, ${org}, ${endUserId}, ${planId}, 'active', ${pools.allowance}, ${pools.used ?? 0}, ${pools.bonus ?? 0}, ${created}, ${created})`)
  return id
}

/** A subscription's pools. */
export const pools = async (server: TestServer, subscriptionId: string) =>
  (await sql(server, (db) => db<{ credits_used: number; bonus_credits: number }>`SELECT credits_used, bonus_credits FROM subscriptions WHERE id = ${subscriptionId}`))[0]!

/** The organization's credits left. */
export const organizationCredits = async (server: TestServer) =>
  Number((await sql(server, (db) => db<{ n: number }>`SELECT credits_remaining AS n FROM organizations WHERE slug = 'default'`))[0]!.n)
