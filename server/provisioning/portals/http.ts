/** HTTP handler of the Portal listing. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentPrincipal } from "../../platform/http/authentication.js"
import { PortalsContract } from "./api.js"
import { PortalService } from "./service.js"

/** Handlers of the `portals` group. */
export const PortalsHttpLive = HttpApiBuilder.group(PortalsContract, "portals", (handlers) =>
  Effect.gen(function* () {
    const portals = yield* PortalService
    return handlers.handle("list", ({ urlParams }) =>
      Effect.map(Effect.flatMap(CurrentPrincipal, (actor) => portals.list(actor, urlParams)), (page) => ({
        portals: page.items,
        nextCursor: page.nextCursor
      }))
    )
  })
)
