/** What the benchmark runner and its child processes tell each other (the children's ready lines). */

/** The servers the POST benchmark compares; each creates in organizations of its own. */
export const postServers = ["svc", "baseline"] as const
export type PostServer = (typeof postServers)[number]

/** Knowledgebases an Agency organization may hold: the creates one POST organization takes. */
export const createsPerOrganization = 200

/** The slug of POST organization `index` (from 0) of `server`. */
export const postOrganization = (server: PostServer, index: number): string => `bench-post-${server}-${index + 1}`

/** Common part of every child's ready line. */
export interface Ready {
  readonly ready: true
  readonly pid: number
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** `<origin>/api/v1` */
  readonly baseUrl: string
}

/** The svc launcher's ready line. */
export interface SvcReady extends Ready {
  /** The all-scopes key of organization `default` (Pro plan). */
  readonly bootstrapKey: string
  /** Secrets of an all-scopes key per POST organization (Agency plan), for each server, in order. */
  readonly postKeys: Readonly<Record<PostServer, ReadonlyArray<string>>>
}

/** The baseline server's ready line. */
export type BaselineReady = Ready

/** The runs launcher's ready line. */
export interface RunsReady extends Ready {
  /** The all-scopes key of organization `default`. */
  readonly bootstrapKey: string
  /** The demo's published support Agent (builtin model) and its Knowledgebase. */
  readonly demoAgentId: string
  readonly knowledgebaseId: string
}

/** The provisioning launcher's ready line. */
export interface ProvisioningReady extends Ready {
  /** Secrets of the 20 all-scopes keys of organization `default`, one per load stream. */
  readonly keys: ReadonlyArray<string>
  /** Two plans and two (non-plan) groups of `default`, named in every `POST /end-users`. */
  readonly tierPlanIds: readonly [string, string]
  readonly groupIds: readonly [string, string]
  /** An all-scopes key of organization `bench-paging`, which holds `pagingAccounts` end users. */
  readonly pagingKey: string
  readonly pagingAccounts: number
}

/** The MCP launcher's ready line. */
export interface McpReady extends Ready {
  /** `<origin>/mcp` */
  readonly mcpUrl: string
  /** A personal key of an admin member of organization `default` (every scope, every MCP family). */
  readonly personalKey: string
  /** An MCP sign-in access token of the same member, approved at `/mcp`. */
  readonly signInToken: string
  /** The demo's Knowledgebase and one of its pages. */
  readonly knowledgebaseId: string
  readonly pageId: string
}

/** The Portal launcher's ready line. */
export interface PortalReady extends Ready {
  /** The measured Portal, its signup webhook enabled towards the benchmark's receiver. */
  readonly portalId: string
  /** A Portal with no webhook, for warming up (its sign-ins record no event). */
  readonly warmupPortalId: string
  /** The measured Portal's signing secret (`whsec_…`), for `verifyWebhook`. */
  readonly webhookSecret: string
  /** End users `person<n>@example.com` for n < people, and `warmup<n>@example.com` for n < warmup, all active. */
  readonly people: number
  readonly warmup: number
  /** The SQLite file of the data directory (the benchmark reads the code emails from its outbox). */
  readonly databaseFile: string
}

/** The mixed benchmark's launcher's ready line (bench/mixed-launcher.ts). */
export interface MixedReady extends Ready {
  /** `<origin>/mcp` */
  readonly mcpUrl: string
  /** The all-scopes key of organization `default` (Pro plan, credits for every run, the `mcp` gate on). */
  readonly bootstrapKey: string
  /** A personal key of an admin member of `default`, for the MCP sessions. */
  readonly personalKey: string
  /** The demo's Knowledgebase (searched) and one of its pages (read by the MCP tool call). */
  readonly knowledgebaseId: string
  readonly pageId: string
  /** A tier plan of `default`, named in every `POST /end-users`. */
  readonly tierPlanId: string
  /** An all-scopes key per Agency organization for the keyed creates, 200 creates each, in order. */
  readonly createKeys: ReadonlyArray<string>
}
