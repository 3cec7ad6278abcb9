/** SQL for organizations, members and API keys. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ReadConnection } from "../platform/sql/read-connection.js"
import type { ApiKey, ApiScope, Gate, KeyKind, Member, Organization, OrganizationIdentity, Plan, Role, StoredScopes } from "./domain.js"
import { declareWrites, writing } from "../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const apiKeysWrites = declareWrites("api_keys")
const membersWrites = declareWrites("members")
const organizationsWrites = declareWrites("organizations")

/** An organization row as stored. */
export interface OrganizationRow {
  readonly id: string
  readonly slug: string
  readonly name: string
  readonly plan: Plan
  readonly gates: string
  readonly credits_remaining: number
  readonly credits_used: number
  readonly created_at: string
}

interface MemberRow {
  readonly id: string
  readonly organization_id: string
  readonly email: string
  readonly role: Role
  readonly created_at: string
}

interface KeyRow {
  readonly id: string
  readonly organization_id: string
  readonly kind: KeyKind
  readonly member_id: string | null
  readonly name: string
  readonly prefix: string
  readonly scopes: string
  readonly created_at: string
  readonly last_used_at: string | null
  readonly revoked_at: string | null
}

/**
 * An organization's columns joined into another row under `o_` names, beside `organization_id`:
 * all but its credits (`OrganizationIdentity`).
 */
export interface JoinedOrganizationColumns {
  readonly organization_id: string
  readonly o_slug: string
  readonly o_name: string
  readonly o_plan: Plan
  readonly o_gates: string
  readonly o_created_at: string
}

/** The organization's columns as a query joins them (`JoinedOrganizationColumns`), `o` being the organizations table. */
export const joinedOrganizationSelect = "o.slug AS o_slug, o.name AS o_name, o.plan AS o_plan, o.gates AS o_gates, o.created_at AS o_created_at"

/** An organization's identity from its columns. */
const identityOf = (row: Pick<OrganizationRow, "id" | "slug" | "name" | "plan" | "gates" | "created_at">): OrganizationIdentity => ({
  id: row.id,
  slug: row.slug,
  name: row.name,
  plan: row.plan,
  gates: new Set(JSON.parse(row.gates) as Array<Gate>),
  createdAt: row.created_at
})

/** The organization of a row that joined it under `o_` names. */
export const joinedOrganization = (row: JoinedOrganizationColumns): OrganizationIdentity =>
  identityOf({ id: row.organization_id, slug: row.o_slug, name: row.o_name, plan: row.o_plan, gates: row.o_gates, created_at: row.o_created_at })

/** A key joined with its organization and member, as authentication reads it. */
interface CredentialRow extends KeyRow, JoinedOrganizationColumns {
  readonly m_email: string | null
  readonly m_role: Role | null
  readonly m_created_at: string | null
  readonly m_removed_at: string | null
}

/** An organization row as the platform sees it. */
export const toOrganization = (row: OrganizationRow): Organization => ({
  ...identityOf(row),
  creditsRemaining: row.credits_remaining,
  creditsUsed: row.credits_used
})

const toMember = (row: MemberRow): Member => ({
  id: row.id,
  organizationId: row.organization_id,
  email: row.email,
  role: row.role,
  createdAt: row.created_at
})

const parseScopes = (text: string): StoredScopes => (text === "all" ? "all" : (JSON.parse(text) as Array<ApiScope>))

const toKey = (row: KeyRow): ApiKey => ({
  id: row.id,
  organizationId: row.organization_id,
  kind: row.kind,
  memberId: row.member_id,
  name: row.name,
  prefix: row.prefix,
  scopes: parseScopes(row.scopes),
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at
})

/** What authentication learns from one indexed lookup by secret hash. */
export interface Credential {
  readonly key: ApiKey
  readonly organization: OrganizationIdentity
  readonly member: (Member & { readonly removed: boolean }) | null
}

/** Organizations, members and keys in SQL. */
export class AccountsRepo extends Effect.Service<AccountsRepo>()("svc/AccountsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const reader = yield* ReadConnection
    const orDie = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.orDie(effect)

    const organizationBy = (column: "id" | "slug", value: string) =>
      orDie(
        sql<OrganizationRow>`SELECT * FROM organizations WHERE ${sql(column)} = ${value}`.pipe(
          Effect.map((rows) => (rows[0] ? toOrganization(rows[0]) : null))
        )
      )

    return {
      organizationBySlug: (slug: string) => organizationBy("slug", slug),
      organizationById: (id: string) => organizationBy("id", id),
      /** Every organization, by slug. */
      organizations: orDie(
        sql<OrganizationRow>`SELECT * FROM organizations ORDER BY slug`.pipe(Effect.map((rows) => rows.map(toOrganization)))
      ),
      insertOrganization: (org: Organization) =>
        orDie(sql`INSERT INTO organizations (id, slug, name, plan, gates, credits_remaining, credits_used, created_at)
          VALUES (${org.id}, ${org.slug}, ${org.name}, ${org.plan}, ${JSON.stringify([...org.gates])},
                  ${org.creditsRemaining}, ${org.creditsUsed}, ${org.createdAt})`.pipe(writing(organizationsWrites))),
      updateOrganization: (org: Organization) =>
        orDie(sql`UPDATE organizations SET name = ${org.name}, plan = ${org.plan},
          gates = ${JSON.stringify([...org.gates].sort())}, credits_remaining = ${org.creditsRemaining},
          credits_used = ${org.creditsUsed} WHERE id = ${org.id}`.pipe(writing(organizationsWrites))),

      activeMemberByEmail: (organizationId: string, email: string) =>
        orDie(
          sql<MemberRow>`SELECT * FROM members WHERE organization_id = ${organizationId} AND email = ${email}
            AND removed_at IS NULL`.pipe(Effect.map((rows) => (rows[0] ? toMember(rows[0]) : null)))
        ),
      insertMember: (member: Member) =>
        orDie(sql`INSERT INTO members (id, organization_id, email, role, created_at)
          VALUES (${member.id}, ${member.organizationId}, ${member.email}, ${member.role}, ${member.createdAt})`.pipe(writing(membersWrites))),
      setMemberRole: (memberId: string, role: Role) =>
        orDie(sql`UPDATE members SET role = ${role} WHERE id = ${memberId}`.pipe(writing(membersWrites))),
      removeMember: (memberId: string, at: string) =>
        orDie(sql`UPDATE members SET removed_at = ${at} WHERE id = ${memberId}`.pipe(writing(membersWrites))),

      insertKey: (key: ApiKey, secretHash: string) =>
        orDie(sql`INSERT INTO api_keys (id, organization_id, kind, member_id, name, prefix, secret_hash, scopes, created_at)
          VALUES (${key.id}, ${key.organizationId}, ${key.kind}, ${key.memberId}, ${key.name}, ${key.prefix},
                  ${secretHash}, ${key.scopes === "all" ? "all" : JSON.stringify(key.scopes)}, ${key.createdAt})`.pipe(writing(apiKeysWrites))),
      countActiveOrganizationKeys: (organizationId: string) =>
        orDie(
          sql<{ n: number }>`SELECT count(*) AS n FROM api_keys WHERE organization_id = ${organizationId}
            AND kind = 'organization' AND revoked_at IS NULL`.pipe(Effect.map((rows) => rows[0]?.n ?? 0))
        ),
      countActivePersonalKeys: (memberId: string) =>
        orDie(
          sql<{ n: number }>`SELECT count(*) AS n FROM api_keys WHERE member_id = ${memberId}
            AND revoked_at IS NULL AND sign_in = 0`.pipe(Effect.map((rows) => rows[0]?.n ?? 0))
        ),
      listKeys: (organizationId: string) =>
        orDie(
          sql<KeyRow>`SELECT * FROM api_keys WHERE organization_id = ${organizationId} AND sign_in = 0
            ORDER BY created_at, id`.pipe(Effect.map((rows) => rows.map(toKey)))
        ),
      keyById: (organizationId: string, keyId: string) =>
        orDie(
          sql<KeyRow>`SELECT * FROM api_keys WHERE organization_id = ${organizationId} AND id = ${keyId} AND sign_in = 0`.pipe(
            Effect.map((rows) => (rows[0] ? toKey(rows[0]) : null))
          )
        ),
      revokeKey: (keyId: string, at: string) =>
        orDie(sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${keyId} AND revoked_at IS NULL`.pipe(writing(apiKeysWrites))),
      touchKey: (keyId: string, at: string) => orDie(sql`UPDATE api_keys SET last_used_at = ${at} WHERE id = ${keyId}`.pipe(writing(apiKeysWrites))),

      /** One indexed lookup by secret hash (on the read connection): the key, its organization and its member. */
      credentialByHash: (secretHash: string) =>
        orDie(
          reader.all<CredentialRow>(
            `SELECT k.*, ${joinedOrganizationSelect}, m.email AS m_email, m.role AS m_role,
              m.created_at AS m_created_at, m.removed_at AS m_removed_at
            FROM api_keys k
            JOIN organizations o ON o.id = k.organization_id
            LEFT JOIN members m ON m.id = k.member_id
            WHERE k.secret_hash = ?`,
            [secretHash]
          ).pipe(
            Effect.map((rows): Credential | null => {
              const row = rows[0]
              if (!row) return null
              return {
                key: toKey(row),
                organization: joinedOrganization(row),
                member:
                  row.member_id && row.m_email && row.m_role && row.m_created_at
                    ? {
                        id: row.member_id,
                        organizationId: row.organization_id,
                        email: row.m_email,
                        role: row.m_role,
                        createdAt: row.m_created_at,
                        removed: row.m_removed_at !== null
                      }
                    : null
              }
            })
          )
        )
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
