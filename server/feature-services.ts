/**
 * The domain services of every feature, without their HTTP: each feature's `services` in
 * `server/features.ts` is its entry here, and administration (`server/admin.ts`) merges them all
 * without loading a contract or a handler. Nothing here may import an `http.ts` or `api.ts` module.
 */
import { Layer } from "effect"
import { AgentService } from "./builder/agents/service.js"
import { AppService } from "./builder/apps/service.js"
import { FlowService } from "./builder/flows/service.js"
import { ActivityLog } from "./knowledge/activity/service.js"
import { ChangeRepo } from "./knowledge/changes/repo.js"
import { ChangeFeed } from "./knowledge/changes/service.js"
import { PassageVectorRepo } from "./knowledge/embeddings/repo.js"
import { VectorSearch } from "./knowledge/embeddings/vector-search.js"
import { MemoryService } from "./knowledge/memories/service.js"
import { PageRepo } from "./knowledge/pages/repo.js"
import { PageService } from "./knowledge/pages/service.js"
import { ReviewService } from "./knowledge/review/service.js"
import { SearchService } from "./knowledge/search/service.js"
import { KnowledgebaseService } from "./knowledge/service.js"
import { SourceRepo } from "./knowledge/sources/repo.js"
import { IngestionSignal, SourceService } from "./knowledge/sources/service.js"
import { PortalChat } from "./portal/chat.js"
import { PortalSignInRepo } from "./portal/repo.js"
import { PortalSignIn } from "./portal/service.js"
import { AccessService } from "./provisioning/access/service.js"
import { AdmissionService } from "./provisioning/admissions/service.js"
import { EndUserService } from "./provisioning/end-users/service.js"
import { GroupGrants } from "./provisioning/groups/grants.js"
import { GroupMembers } from "./provisioning/groups/members.js"
import { GroupService } from "./provisioning/groups/service.js"
import { Outbox } from "./provisioning/outbox/service.js"
import { TierPlanService } from "./provisioning/plans/service.js"
import { PortalService } from "./provisioning/portals/service.js"
import { SuiteService } from "./provisioning/suites/service.js"
import { AppRunService } from "./runtime/app-runs/service.js"
import { FlowRunService } from "./runtime/flow-runs/service.js"
import { RunService } from "./runtime/runs/service.js"
import { RunLists } from "./run-lists/service.js"
import { RunEventFeed } from "./runtime/runs/event-follow.js"
import { RunEventLog } from "./runtime/runs/event-log.js"
import { WebhookRepo } from "./webhooks/repo.js"
import { WebhookService, WebhookSignal } from "./webhooks/service.js"

/** Each feature's domain services, by the feature's name, in the order `server/features.ts` lists the features. */
export const featureServices = {
  agents: AgentService.Default,
  apps: AppService.Default,
  flows: FlowService.Default,
  knowledgebases: Layer.mergeAll(
    KnowledgebaseService.Default,
    ChangeFeed.Default,
    ChangeRepo.Default,
    VectorSearch.Default,
    PassageVectorRepo.Default,
    SearchService.Default,
    ActivityLog.Default,
    MemoryService.Default,
    ReviewService.Default
  ),
  pages: Layer.mergeAll(PageService.Default, PageRepo.Default),
  sources: Layer.mergeAll(SourceService.Default, SourceRepo.Default, IngestionSignal.Default),
  runs: Layer.mergeAll(RunService.Default, RunEventLog.Default, RunEventFeed.Default),
  flowRuns: FlowRunService.Default,
  appRuns: AppRunService.Default,
  runLists: RunLists.Default,
  tierPlans: TierPlanService.Default,
  portals: PortalService.Default,
  /** End-user accounts, their subscriptions and grants, and the email outbox they write to. */
  endUsers: Layer.merge(EndUserService.Default, Outbox.Default),
  /** User groups, with the Suites their grants may name (made by administration) and the access they give. */
  userGroups: Layer.mergeAll(GroupService.Default, GroupMembers.Default, GroupGrants.Default, SuiteService.Default, AccessService.Default),
  portalAdmissions: AdmissionService.Default,
  webhooks: Layer.mergeAll(WebhookService.Default, WebhookRepo.Default, WebhookSignal.Default),
  portalPages: Layer.mergeAll(PortalSignIn.Default, PortalChat.Default, PortalSignInRepo.Default)
} as const

/** The name of a feature (its key in `featureServices`). */
export type FeatureName = keyof typeof featureServices

/** Every feature's services as one list, for `mergeLayers`. */
export const allFeatureServices = Object.values(featureServices)
