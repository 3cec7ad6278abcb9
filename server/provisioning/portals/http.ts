/** HTTP handler of the Portal listing. */
import { Effect } from "effect"
import { CurrentPrincipal } from "../../http/authentication.js"
import { PortalsContract } from "./api.js"
import { PortalService } from "./service.js"
import { serveGroup } from "../../http/served-groups.js"

/** Handlers of the `portals` group. */
export const PortalsHttpLive = serveGroup(PortalsContract, "portals", (handlers) =>
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
