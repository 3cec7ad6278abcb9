/** HTTP handler of the plan catalog. */
import { Effect } from "effect"
import { CurrentPrincipal } from "../../http/authentication.js"
import { TierPlansContract } from "./api.js"
import { TierPlanService } from "./service.js"
import { serveGroup } from "../../http/served-groups.js"

/** Handlers of the `tierPlans` group. */
export const TierPlansHttpLive = serveGroup(TierPlansContract, "tierPlans", (handlers) =>
  Effect.gen(function* () {
    const plans = yield* TierPlanService
    return handlers.handle("list", ({ urlParams }) =>
      Effect.map(Effect.flatMap(CurrentPrincipal, (actor) => plans.list(actor, urlParams)), (page) => ({
        tierPlans: page.items,
        nextCursor: page.nextCursor
      }))
    )
  })
)
