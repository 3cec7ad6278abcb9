/**
 * The registry of features. The API joins their contracts, the server merges their handlers and
 * workers; their services are listed in `feature-services.ts` (which the core and administration
 * merge without loading any HTTP). A new feature is one line here and its entry there.
 */
import { agentsFeature } from "./builder/agents/feature.js"
import { appsFeature } from "./builder/apps/feature.js"
import { appRunsFeature } from "./runtime/app-runs/feature.js"
import { flowsFeature } from "./builder/flows/feature.js"
import { knowledgebasesFeature } from "./knowledge/feature.js"
import { pagesFeature } from "./knowledge/pages/feature.js"
import { sourcesFeature } from "./knowledge/sources/feature.js"
import { flowRunsFeature } from "./runtime/flow-runs/feature.js"
import { runsFeature } from "./runtime/runs/feature.js"
import { runListsFeature } from "./run-lists/feature.js"
import { tierPlansFeature } from "./provisioning/plans/feature.js"
import { portalsFeature } from "./provisioning/portals/feature.js"
import { endUsersFeature } from "./provisioning/end-users/feature.js"
import { userGroupsFeature } from "./provisioning/groups/feature.js"
import { portalAdmissionsFeature } from "./provisioning/admissions/feature.js"
import { webhooksFeature } from "./webhooks/feature.js"
import { portalPagesFeature } from "./portal/feature.js"

/** Every feature, in the order the OpenAPI document lists their groups. */
export const features = [
  agentsFeature,
  appsFeature,
  flowsFeature,
  knowledgebasesFeature,
  pagesFeature,
  sourcesFeature,
  runsFeature,
  flowRunsFeature,
  appRunsFeature,
  runListsFeature,
  tierPlansFeature,
  portalsFeature,
  endUsersFeature,
  userGroupsFeature,
  portalAdmissionsFeature,
  webhooksFeature,
  portalPagesFeature
] as const
