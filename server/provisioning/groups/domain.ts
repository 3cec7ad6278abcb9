/** User groups as the provisioning domain keeps them: the resource schemas of the contract. */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"
import { Email } from "../end-users/domain.js"

/** Refuses unknown properties, naming every problem. */
const strictBody = { parseOptions: { onExcessProperty: "error", errors: "all" } } as const

/** A group's name: 1 to 200 characters, trimmed. */
export const GroupName = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({
  message: () => "name must be 1 to 200 characters",
  jsonSchema: { type: "string", minLength: 1, maxLength: 200, description: "1 to 200 characters (trimmed)." }
})

/** A group's description: at most 2,000 characters. */
export const GroupDescription = Schema.String.pipe(Schema.maxLength(2_000)).annotations({
  message: () => "description must be at most 2000 characters"
})

/** A user group as read and listed. */
export const Group = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  memberCount: Schema.Int.annotations({
    description: "Members who are not deleted: direct members, or for a plan group the holders of its plan."
  }),
  planId: Schema.NullOr(Uuid).annotations({
    description: "The plan this group belongs to (a plan group, joined by holding the plan); null for other groups."
  }),
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({
  identifier: "UserGroup",
  examples: [
    {
      id: "5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
      name: "Beta testers",
      description: "Early access to new Apps.",
      memberCount: 12,
      planId: null,
      createdAt: "2026-11-21T10:00:00.000Z",
      updatedAt: "2026-11-21T10:00:00.000Z"
    }
  ]
})
export type Group = typeof Group.Type

/** Fields a group list may be narrowed to. */
export const groupFields = ["id", "name", "description", "memberCount", "planId", "createdAt", "updatedAt"] as const

/** How a member belongs to a group. */
export const MemberVia = Schema.Literal("direct", "plan")

/** One person on a group's roster. */
export const GroupMember = Schema.Struct({
  endUserId: Uuid,
  email: Schema.String,
  state: Schema.Literal("active", "pending", "revoked").annotations({
    description: "`pending`: invited by email, not signed in yet; `revoked`: on the roster, without access."
  }),
  joinedAt: DateTime,
  via: MemberVia.annotations({ description: "`direct` (added to the group) or `plan` (holds the group's plan)." })
}).annotations({ identifier: "UserGroupMember" })
export type GroupMember = typeof GroupMember.Type

/** A grant a group holds. */
export const GroupGrant = Schema.Struct({
  grantId: Uuid,
  targetKind: Schema.Literal("app", "suite"),
  targetId: Uuid,
  createdAt: DateTime
}).annotations({ identifier: "UserGroupGrant" })
export type GroupGrant = typeof GroupGrant.Type

/** Body of `POST /user-groups`. */
export const CreateGroup = Schema.Struct({
  name: GroupName,
  description: Schema.optional(Schema.NullOr(GroupDescription))
}).annotations({ identifier: "CreateUserGroup", ...strictBody, examples: [{ name: "Beta testers", description: "Early access." }] })
export type CreateGroup = typeof CreateGroup.Type

/** Body of `PATCH /user-groups/{groupId}`: at least one property; `description: null` clears it. */
export const PatchGroup = Schema.Struct({
  name: Schema.optional(GroupName),
  description: Schema.optional(Schema.NullOr(GroupDescription))
}).annotations({ identifier: "PatchUserGroup", ...strictBody, examples: [{ description: null }] })
export type PatchGroup = typeof PatchGroup.Type

/** Body of `POST /user-groups/{groupId}/members`: `endUserId` or `email`, exactly one. */
export const AddMember = Schema.Struct({
  endUserId: Schema.optional(Uuid),
  email: Schema.optional(Email),
  sendEmail: Schema.optional(
    Schema.Boolean.annotations({ description: "Email an invite to sign in (default true); sent after the response." })
  )
}).annotations({
  identifier: "AddUserGroupMember",
  ...strictBody,
  description: "Exactly one of `endUserId` and `email`.",
  examples: [{ email: "ada@example.com" }]
})
export type AddMember = typeof AddMember.Type

/** Body of `POST /user-groups/{groupId}/grants`. */
export const AddGrant = Schema.Struct({
  targetKind: Schema.Literal("app", "suite").annotations({ description: "`app` (an App, Flow or Agent) or `suite`." }),
  targetId: Uuid,
  deploymentId: Schema.optional(
    Schema.String.annotations({ description: "Refused with 400 `portal_scope_unsupported` on group-based access." })
  )
}).annotations({ identifier: "AddUserGroupGrant", ...strictBody, examples: [{ targetKind: "suite", targetId: "5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d" }] })
export type AddGrant = typeof AddGrant.Type

/** The answer of adding a member (`added` says whether the person was not a member yet). */
export interface MemberAdded {
  readonly ok: true
  readonly added: boolean
  readonly endUserId: string
}

/** The answer of granting access (`created` says whether the grant is new). */
export interface GrantAdded {
  readonly ok: true
  readonly grantId: string
  readonly created: boolean
}

/** A group with its roster and grants (`GET /user-groups/{groupId}`). */
export interface GroupDetail {
  readonly group: Group
  readonly members: ReadonlyArray<GroupMember>
  readonly grants: ReadonlyArray<GroupGrant>
}
