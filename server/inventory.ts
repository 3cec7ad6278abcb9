/**
 * What a database holds, for `svc status`: every organization with its active keys (never a secret)
 * and how many of each main object it has, each counted by the repository of the family that owns
 * the object. Read-only, so it runs beside a serving process.
 */
import { Effect, Layer } from "effect"
import { AgentRepo } from "./builder/agents/repo.js"
import { AppRepo } from "./builder/apps/repo.js"
import { FlowRepo } from "./builder/flows/repo.js"
import { KnowledgebaseRepo } from "./knowledge/knowledgebases/repo.js"
import { PageRepo } from "./knowledge/pages/repo.js"
import { SourceRepo } from "./knowledge/sources/repo.js"
import type { ApiKey, Organization } from "./identity/domain.js"
import { AccountsService } from "./identity/service.js"
import { EndUserRepo } from "./provisioning/end-users/repo.js"
import { TierPlanRepo } from "./provisioning/plans/repo.js"
import { PortalRepo } from "./provisioning/portals/repo.js"
import { SuiteRepo } from "./provisioning/suites/repo.js"
import { RunRepo } from "./runtime/runs/repo.js"

/** How many of each main object an organization has. */
export interface OrganizationCounts {
  readonly knowledgebases: number
  readonly pages: number
  readonly sources: number
  readonly agents: number
  readonly flows: number
  readonly apps: number
  readonly endUsers: number
  readonly plans: number
  readonly portals: number
  readonly suites: number
  readonly conversations: number
  readonly executions: number
}

/** One organization as `svc status` shows it. */
export interface OrganizationInventory {
  readonly organization: Organization
  /** Its keys that still work (revoked ones left out), oldest first. */
  readonly keys: ReadonlyArray<ApiKey>
  readonly counts: OrganizationCounts
}

/** What `inventory` uses: the accounts service and the repositories that count, over administration's database. */
export const InventoryLive = Layer.mergeAll(
  AccountsService.Default,
  AgentRepo.Default,
  AppRepo.Default,
  FlowRepo.Default,
  KnowledgebaseRepo.Default,
  PageRepo.Default,
  SourceRepo.Default,
  EndUserRepo.Default,
  TierPlanRepo.Default,
  PortalRepo.Default,
  SuiteRepo.Default,
  RunRepo.Default
)

/** The counts of one organization. */
const countsOf = (organizationId: string): Effect.Effect<OrganizationCounts, never, Layer.Layer.Success<typeof InventoryLive>> =>
  Effect.gen(function* () {
    const [agents, apps, flows, knowledgebases, pages, sources, endUsers, plans, portals, suites, runs] = yield* Effect.all([
      AgentRepo,
      AppRepo,
      FlowRepo,
      KnowledgebaseRepo,
      PageRepo,
      SourceRepo,
      EndUserRepo,
      TierPlanRepo,
      PortalRepo,
      SuiteRepo,
      RunRepo
    ])
    return yield* Effect.all({
      knowledgebases: knowledgebases.count(organizationId),
      pages: pages.count(organizationId),
      sources: sources.count(organizationId),
      agents: agents.count(organizationId),
      flows: flows.count(organizationId),
      apps: apps.count(organizationId),
      endUsers: endUsers.count(organizationId),
      plans: plans.count(organizationId),
      portals: portals.count(organizationId),
      suites: suites.count(organizationId),
      conversations: runs.countConversations(organizationId),
      executions: runs.countExecutions(organizationId)
    })
  })

/** Every organization, by slug, with its active keys and its counts (run with `InventoryLive`). */
export const inventory: Effect.Effect<ReadonlyArray<OrganizationInventory>, never, Layer.Layer.Success<typeof InventoryLive>> = Effect.gen(
  function* () {
    const accounts = yield* AccountsService
    const organizations = yield* accounts.organizations
    return yield* Effect.forEach(organizations, (organization) =>
      Effect.all({
        organization: Effect.succeed(organization),
        keys: Effect.map(Effect.orDie(accounts.listKeys(organization.slug)), (keys) => keys.filter((key) => key.revokedAt === null)),
        counts: countsOf(organization.id)
      })
    )
  }
)
