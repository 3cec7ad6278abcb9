/** HTTP handlers of the Portal admission endpoints: thin adapters over `AdmissionService`. */
import { Effect } from "effect"
import { CurrentPrincipal } from "../../http/authentication.js"
import { PortalAdmissionsContract } from "./api.js"
import { AdmissionService } from "./service.js"
import { serveGroup } from "../../http/served-groups.js"

/** Handlers of the `portalAdmissions` group. */
export const PortalAdmissionsHttpLive = serveGroup(PortalAdmissionsContract, "portalAdmissions", (handlers) =>
  Effect.gen(function* () {
    const admissions = yield* AdmissionService
    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const page = yield* admissions.list(yield* CurrentPrincipal, path.id, { limit: urlParams.limit, cursor: urlParams.cursor })
          return { admissions: page.items, nextCursor: page.nextCursor }
        })
      )
      .handle("admit", ({ path, payload }) => Effect.flatMap(CurrentPrincipal, (actor) => admissions.admit(actor, path.id, payload.groupId)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentPrincipal, (actor) => admissions.remove(actor, path.id, path.groupId)))
  })
)
