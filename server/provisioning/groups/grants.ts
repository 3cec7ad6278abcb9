/**
 * Group grants: additive access to an App, Flow or Agent (`app`) or a Suite, validated before any
 * write; an identical grant is answered, not repeated. Plan groups hold grants too: that is how a
 * plan gives access.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { GrantTargetNotFound, NotFound, PortalScopeUnsupported } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { transactionsOn } from "../../platform/sql/database.js"
import type { AddGrant, GrantAdded } from "./domain.js"
import { GrantRepo } from "./grant-repo.js"
import { GroupService } from "./service.js"

/** Grant operations for a calling principal. */
export class GroupGrants extends Effect.Service<GroupGrants>()("svc/GroupGrants", {
  effect: Effect.gen(function* () {
    const groups = yield* GroupService
    const repo = yield* GrantRepo
    const clock = yield* AppClock
    const inTransaction = transactionsOn(yield* SqlClient.SqlClient)

    return {
      /**
       * Grants the group access to a target (`created` false, with the held grant's id, when the
       * group already holds it). `deploymentId` is refused: an organization with user groups is on
       * group-based access, where Portal-scoped grants do not exist.
       */
      add: (actor: Principal, groupId: string, input: AddGrant): Effect.Effect<GrantAdded, NotFound | PortalScopeUnsupported | GrantTargetNotFound> =>
        inTransaction(
          Effect.gen(function* () {
            const org = actor.organization.id
            const group = yield* groups.found(org, groupId)
            if (input.deploymentId !== undefined) {
              return yield* new PortalScopeUnsupported({
                message: "deploymentId: this organization manages access with groups; a group grant applies at every Portal that admits the group."
              })
            }
            if (!(yield* repo.targetExists(org, input.targetKind, input.targetId))) {
              const noun = input.targetKind === "suite" ? "Suite" : "App, Flow or Agent"
              return yield* new GrantTargetNotFound({ message: `targetId: no ${noun} '${input.targetId}' in this organization.` })
            }
            const grant = yield* repo.add(
              org,
              { id: newId(), groupId: group.id, targetKind: input.targetKind, targetId: input.targetId },
              isoAt(clock.now())
            )
            return { ok: true as const, ...grant }
          })
        ),

      /** Removes one of the group's grants (404 when the group holds no such grant). */
      remove: (actor: Principal, groupId: string, grantId: string): Effect.Effect<{ readonly ok: true }, NotFound> =>
        inTransaction(
          Effect.gen(function* () {
            const group = yield* groups.found(actor.organization.id, groupId)
            if (!(yield* repo.remove(group.id, grantId))) {
              return yield* new NotFound({ message: `Group '${groupId}' holds no grant '${grantId}'.` })
            }
            return { ok: true as const }
          })
        )
    }
  }),
  dependencies: [GroupService.Default, GrantRepo.Default]
}) {}
