/**
 * End-user accounts: provision by email (create or update in place), list, read, revoke, delete
 * (the identity is kept as deleted forever), remove a plan, adjust bonus credits, remove a
 * deprecated per-user grant. Knows nothing of HTTP, so the CLI and MCP tools can reuse it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { AppClock, isoAt } from "../../platform/clock.js"
import { GrantsUnsupported, NotFound } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { Cursors } from "../../platform/pagination.js"
import { transactionsOn } from "../../platform/sql/database.js"
import { WriteTransactions } from "../../platform/sql/write-fast-path.js"
import {
  type BonusCredits,
  emailKey,
  type EndUserDetail,
  type EndUserListItem,
  type ProvisionEndUser,
  type Provisioned,
  type Subscription
} from "./domain.js"
import { startBatcher } from "./batch.js"
import { type ProvisionFailure, type ProvisionOutcome, provisionTx } from "./provision.js"
import { toSubscription } from "./records.js"
import { EndUserRepo, type EndUserRow } from "./repo.js"

/** How to list end users. */
export interface EndUserListRequest {
  readonly email?: string | undefined
  readonly updatedSince?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** End-user operations for a calling principal. */
export class EndUserService extends Effect.Service<EndUserService>()("svc/EndUserService", {
  scoped: Effect.gen(function* () {
    const repo = yield* EndUserRepo
    const cursors = yield* Cursors
    const clock = yield* AppClock
    const sql = yield* SqlClient.SqlClient
    const inTransaction = transactionsOn(sql)
    const writes = yield* WriteTransactions
    /** Group commit where transactions run concurrently; on SQLite each runs whole, synchronously, so there is nothing to share. */
    const batcher = writes.synchronous ? null : yield* startBatcher<ProvisionOutcome>(writes, inTransaction)
    /** The provisioned account, or the refusal as the typed failure it is. */
    const settle = (outcome: ProvisionOutcome): Effect.Effect<Provisioned, ProvisionFailure> =>
      outcome._tag === "Provisioned" ? Effect.succeed(outcome.provisioned) : Effect.fail(outcome.failure)

    const notFound = (id: string) => new NotFound({ message: `No end user '${id}' in this organization.` })
    /** The caller's account `id` (not deleted), or `not_found`. */
    const account = (actor: Principal, id: string): Effect.Effect<EndUserRow, NotFound> =>
      Effect.flatMap(repo.live(actor.organization.id, id), (row) => (row ? Effect.succeed(row) : Effect.fail(notFound(id))))
    const subscriptionNotFound = (id: string) => new NotFound({ message: `No subscription '${id}' of this end user.` })

    return {
      /**
       * Creates the account of `input.email` (201) or updates it in place (200): plans and groups
       * are added, never removed. On PostgreSQL committed together with the requests that arrive at
       * the same time (see `batch.ts`); never call it inside a transaction.
       */
      provision: (actor: Principal, input: ProvisionEndUser): Effect.Effect<Provisioned, ProvisionFailure> =>
        Effect.suspend(() => {
          const nowMs = clock.now()
          const body = () => provisionTx(actor, input, nowMs)
          return Effect.flatMap(batcher === null ? writes.run(body) : batcher.run(body), settle)
        }),

      /** `provision` as the caller's database work (an idempotent create's transaction), in a savepoint of it. */
      provisionWithin: (actor: Principal, input: ProvisionEndUser): Effect.Effect<Provisioned, ProvisionFailure> =>
        Effect.suspend(() => {
          const nowMs = clock.now()
          return Effect.flatMap(writes.run(() => provisionTx(actor, input, nowMs)), settle)
        }),

      /** One page of accounts, oldest first; deleted accounts are never listed, revoked and pending ones are (with `state`). */
      list: (actor: Principal, request: EndUserListRequest) =>
        Effect.gen(function* () {
          const org = actor.organization.id
          const filter = { emailKey: request.email === undefined ? null : emailKey(request.email), updatedSince: request.updatedSince ?? null }
          const list = `end-users:${org}:${filter.emailKey ?? ""}:${filter.updatedSince ?? ""}`
          const page = yield* cursors.request(list, request)
          const rows = yield* repo.page(org, filter, page)
          const result = cursors.page(list, page, rows, (row) => [row[4], row[0]])
          return {
            items: result.items.map(
              ([id, email, fullName, state, createdAt, updatedAt]): EndUserListItem => ({ id, email, fullName, state, createdAt, updatedAt })
            ),
            nextCursor: result.nextCursor
          }
        }),

      /** An account with its subscriptions (credit usage), direct groups and per-user grant ids. */
      get: (actor: Principal, id: string): Effect.Effect<EndUserDetail, NotFound> =>
        Effect.gen(function* () {
          const row = yield* account(actor, id)
          const [subscriptions, groupIds, grantIds] = yield* Effect.all([repo.subscriptions(id), repo.groupIds(id), repo.grantIds(id)])
          return {
            id: row.id,
            email: row.email,
            fullName: row.full_name,
            state: row.state as EndUserDetail["state"],
            createdAt: row.created_at,
            updatedAt: row.updated_at,
            subscriptions: subscriptions.map(toSubscription),
            groupIds,
            grantIds
          }
        }),

      /** Revokes the account's access (idempotent); a later `POST /end-users` with its email restores it. */
      revoke: (actor: Principal, id: string) =>
        inTransaction(
          Effect.gen(function* () {
            const row = yield* account(actor, id)
            if (row.state !== "revoked") {
              const at = isoAt(clock.now())
              yield* repo.update(id, { ...row, state: "revoked", revoked_at: at, updated_at: at })
            }
            return { ok: true as const, revoked: true as const }
          })
        ),

      /** Deletes the account: subscriptions, memberships and grants go; the identity stays, as deleted, forever. */
      remove: (actor: Principal, id: string) =>
        inTransaction(
          Effect.gen(function* () {
            const row = yield* account(actor, id)
            const at = isoAt(clock.now())
            yield* repo.strip(id)
            yield* repo.update(id, { state: "deleted", full_name: null, updated_at: at, revoked_at: row.revoked_at, deleted_at: at })
            return { ok: true as const }
          })
        ),

      /** Removes a plan from the account: the subscription and its credit pool are deleted. */
      removeSubscription: (actor: Principal, id: string, subscriptionId: string) =>
        inTransaction(
          Effect.gen(function* () {
            yield* account(actor, id)
            if (!(yield* repo.deleteSubscription(id, subscriptionId))) return yield* subscriptionNotFound(subscriptionId)
            yield* repo.touch(id, isoAt(clock.now()))
            return { ok: true as const }
          })
        ),

      /**
       * Adds bonus credits to a subscription's pool; a negative amount removes bonus credits, never
       * more than there are (clamped: `applied` says what moved).
       */
      adjustBonusCredits: (actor: Principal, id: string, subscriptionId: string, input: BonusCredits) =>
        inTransaction(
          Effect.gen(function* () {
            yield* account(actor, id)
            const subscription = yield* repo.subscription(id, subscriptionId)
            if (!subscription) return yield* subscriptionNotFound(subscriptionId)
            const applied = input.amount >= 0 ? input.amount : -Math.min(subscription.bonus_credits, -input.amount)
            const at = isoAt(clock.now())
            yield* repo.adjustBonus({
              id: newId(),
              organizationId: actor.organization.id,
              subscriptionId,
              amount: input.amount,
              applied,
              reason: input.reason ?? null,
              at
            })
            yield* repo.touch(id, at)
            const after = yield* repo.subscription(id, subscriptionId)
            return { ok: true as const, applied, subscription: toSubscription(after!) as Subscription }
          })
        ),

      /** Removes a deprecated per-user grant; refused on group-based access. */
      removeGrant: (actor: Principal, id: string, grantId: string) =>
        inTransaction(
          Effect.gen(function* () {
            if (actor.organization.gates.has("groups")) {
              return yield* new GrantsUnsupported({ message: "This organization manages access with user groups; per-user grants are not used." })
            }
            yield* account(actor, id)
            if (!(yield* repo.deleteGrant(id, grantId))) return yield* new NotFound({ message: `No grant '${grantId}' of this end user.` })
            yield* repo.touch(id, isoAt(clock.now()))
            return { ok: true as const }
          })
        ),

      /**
       * Marks a subscription live with a payment processor (`paid`) or not (`active`): the
       * administrator's stand-in for a processor, which this service has none of. A `paid`
       * subscription makes `POST /end-users` naming its plan answer `live_paid_subscription`.
       */
      setPaid: (organizationId: string, subscriptionId: string, paid: boolean) =>
        Effect.flatMap(inTransaction(repo.setSubscriptionStatus(organizationId, subscriptionId, paid ? "paid" : "active")), (found) =>
          found ? Effect.void : Effect.fail(new NotFound({ message: `No subscription '${subscriptionId}' in this organization.` }))
        )
    }
  }),
  dependencies: [EndUserRepo.Default, Cursors.Default, WriteTransactions.Default]
}) {}
