/**
 * Migration 0008: end-user provisioning. Tier plans (each owning its plan group), Portals, Suites,
 * end-user accounts keyed on a normalised email, subscriptions with their own credit pools, user
 * groups with members and grants, deprecated per-user grants, Portal admissions, and the local email
 * outbox.
 *
 * An end user's `state` is `active`, `pending` (pre-provisioned by a group invite by email, becomes
 * active at first sign-in), `revoked` or `deleted` (kept forever so a re-provision is refused).
 * Holding a plan is a subscription row; the plan group's membership is derived from it, never stored
 * in `group_members`.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { dialectOf } from "../dialect.js"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE user_groups (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT,
    plan_id TEXT UNIQUE,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX user_groups_organization ON user_groups (organization_id, created_at, id)`
  yield* sql`CREATE TABLE tier_plans (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    credit_allowance INTEGER NOT NULL CHECK (credit_allowance >= 0),
    group_id TEXT NOT NULL UNIQUE REFERENCES user_groups(id),
    created_at TEXT NOT NULL,
    archived_at TEXT
  ) STRICT`
  yield* sql`CREATE INDEX tier_plans_organization ON tier_plans (organization_id, created_at, id)`
  yield* sql`CREATE TABLE portals (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE INDEX portals_organization ON portals (organization_id, created_at, id)`
  yield* sql`CREATE TABLE suites (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT`
  yield* sql`CREATE TABLE suite_apps (
    suite_id TEXT NOT NULL REFERENCES suites(id) ON DELETE CASCADE,
    app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    PRIMARY KEY (suite_id, app_id)
  ) STRICT`
  yield* sql`CREATE TABLE end_users (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    email TEXT NOT NULL,
    email_key TEXT NOT NULL,
    full_name TEXT,
    state TEXT NOT NULL CHECK (state IN ('active', 'pending', 'revoked', 'deleted')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    revoked_at TEXT,
    deleted_at TEXT,
    UNIQUE (organization_id, email_key)
  ) STRICT`
  yield* sql`CREATE INDEX end_users_listing ON end_users (organization_id, created_at, id)`
  yield* sql`CREATE INDEX end_users_updated ON end_users (organization_id, updated_at, id)`
  yield* sql`CREATE TABLE subscriptions (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    end_user_id TEXT NOT NULL REFERENCES end_users(id) ON DELETE CASCADE,
    tier_plan_id TEXT NOT NULL REFERENCES tier_plans(id),
    status TEXT NOT NULL,
    credit_allowance INTEGER NOT NULL CHECK (credit_allowance >= 0),
    credits_used INTEGER NOT NULL DEFAULT 0 CHECK (credits_used >= 0),
    bonus_credits INTEGER NOT NULL DEFAULT 0 CHECK (bonus_credits >= 0),
    credits_reset_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (end_user_id, tier_plan_id)
  ) STRICT`
  yield* sql`CREATE INDEX subscriptions_plan ON subscriptions (tier_plan_id)`
  yield* sql`CREATE TABLE group_members (
    group_id TEXT NOT NULL REFERENCES user_groups(id) ON DELETE CASCADE,
    end_user_id TEXT NOT NULL REFERENCES end_users(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (group_id, end_user_id)
  ) STRICT`
  yield* sql`CREATE INDEX group_members_end_user ON group_members (end_user_id)`
  yield* sql`CREATE TABLE group_grants (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    group_id TEXT NOT NULL REFERENCES user_groups(id) ON DELETE CASCADE,
    target_kind TEXT NOT NULL CHECK (target_kind IN ('app', 'suite')),
    target_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (group_id, target_kind, target_id)
  ) STRICT`
  yield* sql`CREATE TABLE end_user_grants (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    end_user_id TEXT NOT NULL REFERENCES end_users(id) ON DELETE CASCADE,
    target_kind TEXT NOT NULL CHECK (target_kind IN ('app', 'suite')),
    target_id TEXT NOT NULL,
    deployment_id TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (end_user_id, target_kind, target_id)
  ) STRICT`
  yield* sql`CREATE TABLE portal_admissions (
    portal_id TEXT NOT NULL REFERENCES portals(id) ON DELETE CASCADE,
    group_id TEXT NOT NULL REFERENCES user_groups(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (portal_id, group_id)
  ) STRICT`
  yield* sql`CREATE TABLE outbox_emails (
    id TEXT PRIMARY KEY,
    organization_id TEXT REFERENCES organizations(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    recipient TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    sent_at TEXT,
    last_error TEXT
  ) STRICT`
  yield* sql`CREATE INDEX outbox_emails_recipient ON outbox_emails (recipient, created_at)`
  yield* sql`CREATE INDEX outbox_emails_unsent ON outbox_emails (sent_at, created_at)`
  if (dialectOf(sql) === "pg") {
    // The insertion order SQLite's rowid gives the outbox (mail sent in the order it was queued).
    yield* sql`ALTER TABLE outbox_emails ADD COLUMN rowid BIGINT GENERATED ALWAYS AS IDENTITY`
  }
})
