/** HTTP handler of the plan catalog. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentPrincipal } from "../../platform/http/authentication.js"
import { TierPlansContract } from "./api.js"
import { TierPlanService } from "./service.js"

/** Handlers of the `tierPlans` group. */
export const TierPlansHttpLive = HttpApiBuilder.group(TierPlansContract, "tierPlans", (handlers) =>
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
