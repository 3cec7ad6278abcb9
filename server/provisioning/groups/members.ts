/**
 * Group membership: adding a person by end-user id or by email (an email with no account
 * pre-provisions a `pending` one, so the membership exists at first sign-in), with an invite through
 * the outbox unless told not to, and idempotent removal. A plan group is joined only by holding its
 * plan.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { DeletedIdentity, InvalidRequest, NotFound, PlanGroupJoin, PlanGroupLocked } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { transactionsOn } from "../../platform/sql/database.js"
import { Outbox } from "../outbox/service.js"
import { emailKey } from "../end-users/domain.js"
import type { AddMember, MemberAdded } from "./domain.js"
import { MemberRepo } from "./member-repo.js"
import type { EndUserRow, GroupRow } from "./repo.js"
import { GroupService } from "./service.js"

/** The invite a new member receives. */
const invite = (organizationName: string, group: GroupRow, to: string) => ({
  subject: `You have been invited to ${organizationName || "a workspace"}`,
  body: [
    `You are now a member of "${group.name}" at ${organizationName || "this workspace"}.`,
    "",
    `Sign in with this email address (${to}); we will send you a one-time code. No password is needed.`
  ].join("\n")
})

/** Membership operations for a calling principal. */
export class GroupMembers extends Effect.Service<GroupMembers>()("svc/GroupMembers", {
  effect: Effect.gen(function* () {
    const groups = yield* GroupService
    const repo = yield* MemberRepo
    const outbox = yield* Outbox
    const clock = yield* AppClock
    const inTransaction = transactionsOn(yield* SqlClient.SqlClient)

    /** The end user the body names: by id (404 when unknown), or by email (found or pre-provisioned as pending). */
    const person = (org: string, input: AddMember, at: string): Effect.Effect<EndUserRow, NotFound | InvalidRequest> => {
      if (input.endUserId !== undefined) {
        const id = input.endUserId
        return Effect.flatMap(repo.endUser(org, id), (row) =>
          row ? Effect.succeed(row) : Effect.fail(new NotFound({ message: `endUserId: no end user '${id}' in this organization.` }))
        )
      }
      const email = input.email!
      return Effect.map(repo.endUserByEmail(org, { id: newId(), email, key: emailKey(email) }, at), ({ endUser }) => endUser)
    }

    return {
      /**
       * Adds a member (`added` false when already one). The invite is recorded in the outbox in the
       * same transaction, only for a new membership of a person who may sign in, unless `sendEmail`
       * is false; the outbox sends it after the response.
       */
      add: (
        actor: Principal,
        groupId: string,
        input: AddMember
      ): Effect.Effect<MemberAdded, InvalidRequest | NotFound | PlanGroupJoin | DeletedIdentity> =>
        Effect.gen(function* () {
          if ((input.endUserId === undefined) === (input.email === undefined)) {
            return yield* new InvalidRequest({ message: "give exactly one of endUserId and email." })
          }
          const org = actor.organization.id
          return yield* inTransaction(
            Effect.gen(function* () {
              const group = yield* groups.found(org, groupId)
              if (group.plan_id !== null) {
                return yield* new PlanGroupJoin({
                  message: `Group '${groupId}' belongs to a plan; it is joined by holding the plan, not directly.`
                })
              }
              const at = isoAt(clock.now())
              const endUser = yield* person(org, input, at)
              if (endUser.state === "deleted") {
                return yield* new DeletedIdentity({ message: `End user '${endUser.id}' was deleted; a deleted identity is never restored.` })
              }
              const added = yield* repo.add(org, group.id, endUser.id, at)
              if (added && input.sendEmail !== false && endUser.state !== "revoked") {
                const message = invite(actor.organization.name, group, endUser.email)
                yield* outbox.enqueue({ organizationId: org, kind: "group_invite", to: endUser.email, ...message })
              }
              return { ok: true as const, added, endUserId: endUser.id }
            })
          )
        }),

      /** Removes a direct member (`removed` false when not one); group-granted access stops, the account and plans stay. */
      remove: (
        actor: Principal,
        groupId: string,
        endUserId: string
      ): Effect.Effect<{ readonly ok: true; readonly removed: boolean }, NotFound | PlanGroupLocked> =>
        inTransaction(
          Effect.gen(function* () {
            const group = yield* groups.found(actor.organization.id, groupId)
            if (group.plan_id !== null) {
              return yield* new PlanGroupLocked({
                message: `Group '${groupId}' belongs to a plan; its members hold the plan (remove the plan from the end user instead).`
              })
            }
            return { ok: true as const, removed: yield* repo.remove(group.id, endUserId) }
          })
        )
    }
  }),
  dependencies: [GroupService.Default, MemberRepo.Default, Outbox.Default]
}) {}
