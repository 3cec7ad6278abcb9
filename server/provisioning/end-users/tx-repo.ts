/**
 * The SQL of provisioning as transaction body steps (`WriteTransactions`): the check's look-ups and
 * the writes of accounts, subscriptions (each with its credit pool), direct memberships and per-user
 * grants. Each is the only copy of its statement; `EndUserRepo`'s Effect methods run the same steps
 * inside their callers' `@effect/sql` transactions.
 */
import { placeholders, textPerCount, tuples } from "../../platform/sql/statement-text.js"
import { type TxBody, txAll, txRun } from "../../platform/sql/write-fast-path.js"
import type { TierPlanRow } from "../plans/domain.js"
import type { EndUserRow, GrantRow, SubscriptionRow } from "./rows.js"
import { declareWrites } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const endUsersWrites = declareWrites("end_users")
const subscriptionsWrites = declareWrites("subscriptions")
const groupMembersWrites = declareWrites("group_members")
const endUserGrantsWrites = declareWrites("end_user_grants")

/** What provisioning checks an email and its ids against. */
export interface Lookup {
  readonly account: EndUserRow | null
  readonly plans: ReadonlyArray<TierPlanRow>
  /** The groups found among the ids asked for, each with its plan's id (`null` for a user group). */
  readonly groups: ReadonlyMap<string, string | null>
}

/** One row of the provisioning look-up: an account, a plan or a group, in generic columns. */
interface LookupRow {
  readonly kind: "account" | "plan" | "group"
  readonly id: string
  readonly t1: string | null
  readonly t2: string | null
  readonly t3: string | null
  readonly t4: string | null
  readonly t5: string | null
  readonly t6: string | null
  readonly n: number | null
}

/** Ids are at most 50 per list (`domain.ts`); the look-up's shape is its two counts, `plans * lookupShape + groups`. */
const lookupShape = 1_000

const lookupText = textPerCount((shape) => {
  const plans = Math.floor(shape / lookupShape)
  const groups = shape % lookupShape
  let text = `SELECT 'account' AS kind, id, email AS t1, full_name AS t2, state AS t3, created_at AS t4, updated_at AS t5, revoked_at AS t6, NULL AS n
    FROM end_users WHERE organization_id = ? AND email_key = ?`
  if (plans > 0) {
    text += ` UNION ALL SELECT 'plan', id, name, group_id, NULL, created_at, NULL, NULL, credit_allowance
      FROM tier_plans WHERE organization_id = ? AND archived_at IS NULL AND id IN (${placeholders(plans)})`
  }
  if (groups > 0) {
    text += ` UNION ALL SELECT 'group', id, plan_id, NULL, NULL, NULL, NULL, NULL, NULL
      FROM user_groups WHERE organization_id = ? AND id IN (${placeholders(groups)})`
  }
  return text
})


const insertSubscriptionsText = textPerCount(
  (rows) => `INSERT INTO subscriptions (id, organization_id, end_user_id, tier_plan_id, status, credit_allowance, credits_used, bonus_credits,
     credits_reset_at, created_at) VALUES ${tuples(rows, 10)} ON CONFLICT (end_user_id, tier_plan_id) DO NOTHING`
)

const insertMembersText = textPerCount(
  (rows) => `INSERT INTO group_members (group_id, end_user_id, organization_id, created_at) VALUES ${tuples(rows, 4)}
     ON CONFLICT (group_id, end_user_id) DO NOTHING`
)

const insertGrantsText = textPerCount(
  (rows) => `INSERT INTO end_user_grants (id, organization_id, end_user_id, target_kind, target_id, deployment_id, created_at)
     VALUES ${tuples(rows, 7)} ON CONFLICT (end_user_id, target_kind, target_id) DO NOTHING RETURNING id`
)

/**
 * What provisioning checks, in one statement: the account of an email key (any state), the
 * organization's live plans among `planIds`, and its groups among `groupIds`.
 */
export function* lookupTx(organizationId: string, key: string, planIds: ReadonlyArray<string>, groupIds: ReadonlyArray<string>): TxBody<Lookup> {
  const params: Array<unknown> = [organizationId, key]
  if (planIds.length > 0) params.push(organizationId, ...planIds)
  if (groupIds.length > 0) params.push(organizationId, ...groupIds)
  const text = lookupText(planIds.length * lookupShape + groupIds.length)
  const rows = yield* txAll<LookupRow>(text, params)
  let account: EndUserRow | null = null
  const plans: Array<TierPlanRow> = []
  const groups = new Map<string, string | null>()
  for (const row of rows) {
    if (row.kind === "account") {
      account = {
        id: row.id,
        organization_id: organizationId,
        email: row.t1!,
        email_key: key,
        full_name: row.t2,
        state: row.t3 as EndUserRow["state"],
        created_at: row.t4!,
        updated_at: row.t5!,
        revoked_at: row.t6,
        deleted_at: null
      }
    } else if (row.kind === "plan") {
      plans.push({ id: row.id, organization_id: organizationId, name: row.t1!, group_id: row.t2!, credit_allowance: Number(row.n), created_at: row.t4!, archived_at: null })
    } else groups.set(row.id, row.t1)
  }
  return { account, plans, groups }
}

/** Inserts an account unless its email key exists (a concurrent create); `true` when inserted. */
export function* insertAccountIfAbsentTx(row: EndUserRow): TxBody<boolean> {
  const inserted = yield* txAll<{ id: string }>(
    `INSERT INTO end_users (id, organization_id, email, email_key, full_name, state, created_at, updated_at, revoked_at, deleted_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (organization_id, email_key) DO NOTHING RETURNING id`,
    [row.id, row.organization_id, row.email, row.email_key, row.full_name, row.state, row.created_at, row.updated_at, row.revoked_at, row.deleted_at],
    endUsersWrites
  )
  return inserted.length > 0
}

/** An account as the families that name end users see it: its id, email and state. */
export interface AccountRef {
  readonly id: string
  readonly email: string
  readonly state: EndUserRow["state"]
}

/** The organization's account with this id (any state), or null. */
export function* accountByIdTx(organizationId: string, id: string): TxBody<AccountRef | null> {
  const rows = yield* txAll<AccountRef>("SELECT id, email, state FROM end_users WHERE organization_id = ? AND id = ?", [organizationId, id])
  return rows[0] ?? null
}

/**
 * An identity created by email: the organization's account keyed on `email.key` (any state), created
 * `pending` (no name, at `at`) when there is none, with whether this call created it. Concurrent
 * calls create one account: the key is unique, and the loser reads the winner's row.
 */
export function* accountByEmailTx(
  organizationId: string,
  email: { readonly id: string; readonly email: string; readonly key: string },
  at: string
): TxBody<{ readonly account: AccountRef; readonly created: boolean }> {
  const created = yield* insertAccountIfAbsentTx({
    id: email.id,
    organization_id: organizationId,
    email: email.email,
    email_key: email.key,
    full_name: null,
    state: "pending",
    created_at: at,
    updated_at: at,
    revoked_at: null,
    deleted_at: null
  })
  const rows = yield* txAll<AccountRef>("SELECT id, email, state FROM end_users WHERE organization_id = ? AND email_key = ?", [organizationId, email.key])
  return { account: rows[0]!, created }
}

/** An account as sign-in sees it. */
export interface SignInAccount {
  readonly id: string
  readonly organization_id: string
  readonly email: string
  readonly full_name: string | null
  readonly state: EndUserRow["state"]
  readonly created_at: string
}

const signInColumns = "id, organization_id, email, full_name, state, created_at"

/** The organization's account with this email key (any state), as sign-in sees it, or null. */
export function* signInAccountByEmailTx(organizationId: string, key: string): TxBody<SignInAccount | null> {
  const rows = yield* txAll<SignInAccount>(`SELECT ${signInColumns} FROM end_users WHERE organization_id = ? AND email_key = ?`, [organizationId, key])
  return rows[0] ?? null
}

/** The account with this id (any organization, any state), as sign-in sees it, or null. */
export function* signInAccountTx(id: string): TxBody<SignInAccount | null> {
  const rows = yield* txAll<SignInAccount>(`SELECT ${signInColumns} FROM end_users WHERE id = ?`, [id])
  return rows[0] ?? null
}

/** Makes a `pending` account active (its first sign-in); any other state is left as it is. */
export function* activatePendingAccountTx(id: string, at: string): TxBody<void> {
  yield* txRun("UPDATE end_users SET state = 'active', updated_at = ? WHERE id = ? AND state = 'pending'", [at, id], endUsersWrites)
}

/** Records the account's first sign-in to its organization; true only the first time. */
export function* markFirstSignInTx(id: string, at: string): TxBody<boolean> {
  const rows = yield* txAll<{ id: string }>("UPDATE end_users SET first_signed_in_at = ? WHERE id = ? AND first_signed_in_at IS NULL RETURNING id", [at, id], endUsersWrites)
  return rows.length === 1
}

/** Sets an account's state, name and times. */
export function* updateAccountTx(id: string, changes: Pick<EndUserRow, "state" | "full_name" | "updated_at" | "revoked_at" | "deleted_at">): TxBody<void> {
  yield* txRun("UPDATE end_users SET state = ?, full_name = ?, updated_at = ?, revoked_at = ?, deleted_at = ? WHERE id = ?", [
    changes.state,
    changes.full_name,
    changes.updated_at,
    changes.revoked_at,
    changes.deleted_at,
    id
  ], endUsersWrites)
}

/** Marks an account changed at `at`. */
export function* touchAccountTx(id: string, at: string): TxBody<void> {
  yield* txRun("UPDATE end_users SET updated_at = ? WHERE id = ?", [at, id], endUsersWrites)
}

/** An account's subscriptions with their plans' names, oldest first. */
export function* subscriptionsTx(endUserId: string): TxBody<ReadonlyArray<SubscriptionRow>> {
  return yield* txAll<SubscriptionRow>(
    `SELECT s.*, p.name AS tier_plan_name FROM subscriptions s
     JOIN tier_plans p ON p.id = s.tier_plan_id WHERE s.end_user_id = ? ORDER BY s.created_at, s.id`,
    [endUserId]
  )
}

/** Inserts subscriptions (each its own credit pool), skipping plans already held. */
export function* insertSubscriptionsTx(rows: ReadonlyArray<Omit<SubscriptionRow, "tier_plan_name">>): TxBody<void> {
  if (rows.length === 0) return
  yield* txRun(
    insertSubscriptionsText(rows.length),
    rows.flatMap((row) => [
      row.id,
      row.organization_id,
      row.end_user_id,
      row.tier_plan_id,
      row.status,
      row.credit_allowance,
      row.credits_used,
      row.bonus_credits,
      row.credits_reset_at,
      row.created_at
    ]),
    subscriptionsWrites
  )
}

/** Direct group memberships of an account, oldest first. */
export function* groupIdsTx(endUserId: string): TxBody<ReadonlyArray<string>> {
  const rows = yield* txAll<{ group_id: string }>("SELECT group_id FROM group_members WHERE end_user_id = ? ORDER BY created_at, group_id", [endUserId])
  return rows.map((row) => row.group_id)
}

/** A direct membership to add. */
export interface MemberRow {
  readonly group_id: string
  readonly end_user_id: string
  readonly organization_id: string
  readonly created_at: string
}

/** Adds direct memberships, keeping the ones already there. */
export function* insertMembersTx(rows: ReadonlyArray<MemberRow>): TxBody<void> {
  if (rows.length === 0) return
  yield* txRun(
    insertMembersText(rows.length),
    rows.flatMap((row) => [row.group_id, row.end_user_id, row.organization_id, row.created_at]),
    groupMembersWrites
  )
}

/** Adds per-user grants, keeping identical ones; answers how many are new. */
export function* insertGrantsTx(rows: ReadonlyArray<GrantRow>): TxBody<number> {
  if (rows.length === 0) return 0
  const inserted = yield* txAll<{ id: string }>(
    insertGrantsText(rows.length),
    rows.flatMap((row) => [row.id, row.organization_id, row.end_user_id, row.target_kind, row.target_id, row.deployment_id, row.created_at]),
    endUserGrantsWrites
  )
  return inserted.length
}
