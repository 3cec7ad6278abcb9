/**
 * `POST /end-users`: create or update an account by email, as one transaction body
 * (`WriteTransactions`). Every id is checked before anything is written, so a refusal leaves no
 * partial account; then the account, its subscriptions (one per plan, each its own credit pool),
 * its direct memberships, its per-user grants and the welcome email are written.
 */
import type { Principal } from "../../identity/domain.js"
import { isoAt } from "../../platform/clock.js"
import {
  DeletedIdentity,
  GrantsUnsupported,
  GrantTargetNotFound,
  GroupNotFound,
  LivePaidSubscription,
  PlanGroupJoin,
  TierNotFound
} from "../../platform/errors.js"
import { newId, newSortableId } from "../../platform/ids.js"
import { grantTargetIdsTx } from "../access/targets.js"
import type { TxBody } from "../../platform/sql/write-fast-path.js"
import type { OutgoingEmail } from "../outbox/domain.js"
import { insertOutboxEmailTx } from "../outbox/repo.js"
import type { TierPlanRow } from "../plans/domain.js"
import { emailKey, type ProvisionEndUser, type Provisioned } from "./domain.js"
import { oneMonthOn, toEndUser, toSubscription } from "./records.js"
import type { EndUserRow, GrantRow, SubscriptionRow } from "./rows.js"
import {
  groupIdsTx,
  insertAccountIfAbsentTx,
  insertGrantsTx,
  insertMembersTx,
  insertSubscriptionsTx,
  lookupTx,
  subscriptionsTx,
  touchAccountTx,
  updateAccountTx
} from "./tx-repo.js"

/** Every failure `POST /end-users` may answer after its body was read. */
export type ProvisionFailure =
  | DeletedIdentity
  | GrantsUnsupported
  | TierNotFound
  | GroupNotFound
  | PlanGroupJoin
  | GrantTargetNotFound
  | LivePaidSubscription

/** A refusal: nothing was written. */
interface Refused {
  readonly _tag: "Refused"
  readonly failure: ProvisionFailure
}

/** What a provisioning body ends with: the account provisioned, or the refusal that wrote nothing. */
export type ProvisionOutcome = { readonly _tag: "Provisioned"; readonly provisioned: Provisioned } | Refused

const unique = (ids: ReadonlyArray<string> | undefined): Array<string> => [...new Set(ids ?? [])]
const quoted = (ids: ReadonlyArray<string>) => ids.map((id) => `'${id}'`).join(", ")

const refused = (failure: ProvisionFailure): Refused => ({ _tag: "Refused", failure })

/** The message naming every problem, or `null` when there is none. */
const problemsMessage = (problems: ReadonlyArray<string>): string | null => (problems.length === 0 ? null : `${problems.join("; ")}.`)

/** What checking a request found: the plans it names and the existing account, if any. */
interface Checked {
  readonly _tag: "Checked"
  readonly account: EndUserRow | null
  readonly plans: ReadonlyArray<TierPlanRow>
  readonly held: ReadonlyArray<SubscriptionRow>
}

/** Checks every id of the request against the organization; writes nothing. */
function* check(actor: Principal, input: ProvisionEndUser): TxBody<Checked | Refused> {
  const org = actor.organization.id
  const planIds = unique(input.tierPlanIds)
  const groupIds = unique(input.groupIds)
  const { account, plans, groups } = yield* lookupTx(org, emailKey(input.email), planIds, groupIds)
  if (account?.state === "deleted") {
    return refused(new DeletedIdentity({ message: `The account of '${input.email}' was deleted; it is never provisioned again.` }))
  }
  const grants = input.grants ?? []
  if (grants.length > 0 && actor.organization.gates.has("groups")) {
    return refused(
      new GrantsUnsupported({
        message: "grants: this organization manages access with user groups; grant access to a group instead (per-user grants are deprecated)."
      })
    )
  }
  const livePlans = new Set(plans.map((plan) => plan.id))
  const missingPlans = problemsMessage(
    planIds.filter((id) => !livePlans.has(id)).map((id) => `tierPlanIds: no live tier plan '${id}' in this organization`)
  )
  if (missingPlans !== null) return refused(new TierNotFound({ message: missingPlans }))
  const missingGroups = problemsMessage(
    groupIds.filter((id) => !groups.has(id)).map((id) => `groupIds: no user group '${id}' in this organization`)
  )
  if (missingGroups !== null) return refused(new GroupNotFound({ message: missingGroups }))
  const planGroups = groupIds.filter((id) => groups.get(id) !== null)
  if (planGroups.length > 0) {
    return refused(
      new PlanGroupJoin({
        message: `groupIds: ${quoted(planGroups)} ${planGroups.length === 1 ? "is a plan's group" : "are plans' groups"}, joined only by holding the plan (use tierPlanIds).`
      })
    )
  }
  if (grants.length > 0) {
    const appIds = grants.filter((grant) => grant.targetKind === "app").map((grant) => grant.targetId)
    const suiteIds = grants.filter((grant) => grant.targetKind === "suite").map((grant) => grant.targetId)
    const found = new Set<string>()
    for (const id of yield* grantTargetIdsTx(org, "app", appIds)) found.add(`app:${id}`)
    for (const id of yield* grantTargetIdsTx(org, "suite", suiteIds)) found.add(`suite:${id}`)
    const missingTargets = problemsMessage(
      grants.flatMap((grant, index) =>
        found.has(`${grant.targetKind}:${grant.targetId}`)
          ? []
          : [`grants[${index}]: no ${grant.targetKind === "app" ? "App, Flow or Agent" : "Suite"} '${grant.targetId}' in this organization`]
      )
    )
    if (missingTargets !== null) return refused(new GrantTargetNotFound({ message: missingTargets }))
  }
  const held = account === null ? [] : yield* subscriptionsTx(account.id)
  const paid = held.filter((subscription) => subscription.status === "paid" && livePlans.has(subscription.tier_plan_id))
  if (paid.length > 0) {
    return refused(
      new LivePaidSubscription({
        message: `tierPlanIds: '${input.email}' has a live paid subscription on ${quoted(paid.map((s) => s.tier_plan_name))} with a payment processor; cancel it there first.`
      })
    )
  }
  return { _tag: "Checked", account, plans, held }
}

/**
 * Creates or updates the account of `input.email`: a transaction body for `WriteTransactions`
 * (`nowMs` is the clock's time, read before the transaction). A concurrent create of the same
 * email (possible where two transactions run at once) is found on the second look.
 */
export function* provisionTx(actor: Principal, input: ProvisionEndUser, nowMs: number): TxBody<ProvisionOutcome> {
  for (let look = 1; ; look++) {
    const checked = yield* check(actor, input)
    if (checked._tag === "Refused") return checked
    const written = yield* write(actor, input, checked, nowMs)
    if (written !== null) return { _tag: "Provisioned", provisioned: written }
    if (look >= 2) throw new Error(`The account of ${input.email} kept being created concurrently`)
  }
}

/** Writes a checked request; `null` when a concurrent request created the account first. */
function* write(actor: Principal, input: ProvisionEndUser, checked: Checked, nowMs: number): TxBody<Provisioned | null> {
  const org = actor.organization.id
  const at = isoAt(nowMs)
  let account = checked.account
  let created = false
  let changed = false
  if (account === null) {
    const row: EndUserRow = {
      id: newSortableId(),
      organization_id: org,
      email: input.email,
      email_key: emailKey(input.email),
      full_name: input.fullName ?? null,
      state: "active",
      created_at: at,
      updated_at: at,
      revoked_at: null,
      deleted_at: null
    }
    if (!(yield* insertAccountIfAbsentTx(row))) return null
    account = row
    created = true
  } else {
    const state = "active" as const
    const fullName = input.fullName ?? account.full_name
    created = account.state === "pending"
    if (account.state !== state || fullName !== account.full_name) {
      account = { ...account, state, full_name: fullName, revoked_at: null, updated_at: at }
      yield* updateAccountTx(account.id, account)
      changed = true
    }
  }
  const endUserId = account.id
  const heldPlans = new Set(checked.held.map((subscription) => subscription.tier_plan_id))
  const planOrder = unique(input.tierPlanIds)
  const newSubscriptions: Array<SubscriptionRow> = [...checked.plans]
    .sort((a, b) => planOrder.indexOf(a.id) - planOrder.indexOf(b.id))
    .filter((plan) => !heldPlans.has(plan.id))
    .map((plan) => ({
      id: newSortableId(),
      organization_id: org,
      end_user_id: endUserId,
      tier_plan_id: plan.id,
      tier_plan_name: plan.name,
      status: "active",
      credit_allowance: plan.credit_allowance,
      credits_used: 0,
      bonus_credits: 0,
      credits_reset_at: oneMonthOn(nowMs),
      created_at: at
    }))
  yield* insertSubscriptionsTx(newSubscriptions)
  const groupIds = unique(input.groupIds)
  if (groupIds.length > 0) {
    const joined = checked.account === null ? new Set<string>() : new Set(yield* groupIdsTx(endUserId))
    const newGroups = groupIds.filter((id) => !joined.has(id))
    yield* insertMembersTx(newGroups.map((group_id) => ({ group_id, end_user_id: endUserId, organization_id: org, created_at: at })))
    changed ||= newGroups.length > 0
  }
  const grants: Array<GrantRow> = (input.grants ?? []).map((grant) => ({
    id: newId(),
    organization_id: org,
    end_user_id: endUserId,
    target_kind: grant.targetKind,
    target_id: grant.targetId,
    deployment_id: grant.deploymentId ?? null,
    created_at: at
  }))
  const grantsCreated = yield* insertGrantsTx(grants)
  changed ||= newSubscriptions.length > 0 || grantsCreated > 0
  if (changed && checked.account !== null) yield* touchAccountTx(endUserId, at)
  if (input.sendEmail === true) yield* insertOutboxEmailTx(newId(), welcomeEmail(actor, account.email, account.full_name), at)
  const subscriptions = [...checked.held, ...newSubscriptions]
  return {
    endUser: toEndUser(account),
    created,
    subscriptions: subscriptions.map(toSubscription),
    groupsJoined: groupIds,
    grantsCreated
  } as Provisioned
}

/** The welcome email `sendEmail: true` asks for. */
const welcomeEmail = (actor: Principal, to: string, fullName: string | null): OutgoingEmail => ({
  organizationId: actor.organization.id,
  kind: "end_user_welcome",
  to,
  subject: `Your ${actor.organization.name} account`,
  body: [
    `Hello${fullName ? ` ${fullName}` : ""},`,
    "",
    `${actor.organization.name} has set up an account for ${to}.`,
    "Sign in at any of its Portals with this email address: we send you a one-time code, no password needed."
  ].join("\n")
})
