/** What the benchmark runner and its child processes tell each other (the children's ready lines). */

/** Organizations (Agency plan: cap 200 Knowledgebases) for the POST benchmarks, one per server. */
export const postOrganizations = ["bench-post-svc", "bench-post-baseline"] as const
export type PostOrganization = (typeof postOrganizations)[number]

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
  /** Secret of an all-scopes key per POST organization. */
  readonly postKeys: Readonly<Record<PostOrganization, string>>
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
  /** The demo's Knowledgebase and one of its pages. */
  readonly knowledgebaseId: string
  readonly pageId: string
}
