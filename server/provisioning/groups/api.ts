/** The user-group endpoints of the contract: groups, their members and their grants. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/authentication.js"
import { featureContract } from "../../http/contract.js"
import { ErrorResponse } from "../../http/error-responses.js"
import { gate, scope } from "../../http/policy.js"
import { IdempotencyHeaders } from "../../http/responses.js"
import { FieldsParam, ListOf, listQuery, Narrowable } from "../../platform/pagination.js"
import { Uuid } from "../../platform/schema.js"
import { AddGrant, AddMember, CreateGroup, Group, GroupGrant, GroupMember, PatchGroup } from "./domain.js"

const GroupPath = Schema.Struct({ groupId: Schema.String })
const MemberPath = Schema.Struct({ groupId: Schema.String, endUserId: Schema.String })
const GrantPath = Schema.Struct({ groupId: Schema.String, grantId: Schema.String })

/** `{ok: true}`. */
const Ok = Schema.Struct({ ok: Schema.Literal(true) }).annotations({ identifier: "UserGroupOk" })

const GroupResponse = Schema.Struct({ group: Group }).annotations({ identifier: "UserGroupResponse" })
const GroupList = ListOf("groups", Narrowable(Group, "UserGroupListItem")).annotations({ identifier: "UserGroupList" })
const GroupDetailResponse = Schema.Struct({
  group: Group,
  members: Schema.Array(GroupMember),
  grants: Schema.Array(GroupGrant)
}).annotations({ identifier: "UserGroupDetail" })

const memberAdded = (added: boolean, identifier: string) =>
  Schema.Struct({ ok: Schema.Literal(true), added: Schema.Literal(added), endUserId: Uuid }).annotations({ identifier })
const grantAdded = (created: boolean, identifier: string) =>
  Schema.Struct({ ok: Schema.Literal(true), grantId: Uuid, created: Schema.Literal(created) }).annotations({ identifier })
const MemberRemoved = Schema.Struct({ ok: Schema.Literal(true), removed: Schema.Boolean }).annotations({ identifier: "UserGroupMemberRemoved" })

/** `/user-groups`: answers 403 `groups_disabled` until the organization's `groups` gate is on. */
export class UserGroupsApi extends HttpApiGroup.make("userGroups")
  .annotate(OpenApi.Description, "User groups of end users: their members and the access granted to them.")
  .add(
    HttpApiEndpoint.post("create", "/user-groups")
      .setHeaders(IdempotencyHeaders)
      .setPayload(CreateGroup)
      .addSuccess(GroupResponse, { status: 201 })
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.Conflict)
      .annotate(OpenApi.Summary, "Create a user group")
      .annotate(OpenApi.Description, "Creates a group that belongs to no plan, with no members and no grants. Takes `Idempotency-Key`.")
      .pipe(scope("end_users:write"))
  )
  .add(
    HttpApiEndpoint.get("list", "/user-groups")
      .setUrlParams(listQuery({ fields: FieldsParam }))
      .addSuccess(GroupList)
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "List user groups")
      .annotate(OpenApi.Description, "Every group with its member count, oldest first; plan groups are included and carry their `planId`.")
      .pipe(scope("end_users:read"))
  )
  .add(
    HttpApiEndpoint.get("get", "/user-groups/:groupId")
      .setPath(GroupPath)
      .addSuccess(GroupDetailResponse)
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Read a user group")
      .annotate(
        OpenApi.Description,
        "The group, its roster (direct members; for a plan group, the holders of its plan) and its grants. Deleted accounts are left out."
      )
      .pipe(scope("end_users:read"))
  )
  .add(
    HttpApiEndpoint.patch("update", "/user-groups/:groupId")
      .setPath(GroupPath)
      .setPayload(PatchGroup)
      .addSuccess(Ok)
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.PlanGroupLocked)
      .annotate(OpenApi.Summary, "Change a user group")
      .annotate(OpenApi.Description, "Changes `name` and `description` (null clears it); at least one; omitted ones are untouched. A plan's group: 409 `plan_group`.")
      .pipe(scope("end_users:write"))
  )
  .add(
    HttpApiEndpoint.del("delete", "/user-groups/:groupId")
      .setPath(GroupPath)
      .addSuccess(Ok)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.PlanGroupLocked)
      .annotate(OpenApi.Summary, "Delete a user group")
      .annotate(
        OpenApi.Description,
        "Memberships, grants and Portal admissions go with it; accounts, plans and credits are untouched. A plan's group: 409 `plan_group`."
      )
      .pipe(scope("end_users:write"))
  )
  .add(
    HttpApiEndpoint.post("addMember", "/user-groups/:groupId/members")
      .setPath(GroupPath)
      .setPayload(AddMember)
      .addSuccess(memberAdded(true, "UserGroupMemberAdded"), { status: 201 })
      .addSuccess(memberAdded(false, "UserGroupMemberKept"))
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.DeletedIdentity)
      .addError(ErrorResponse.PlanGroupJoin)
      .annotate(OpenApi.Summary, "Add a member to a user group")
      .annotate(
        OpenApi.Description,
        "By `endUserId` (404 when unknown) or `email` (an email with no account pre-provisions a pending one, so the membership exists at first sign-in). 201 with `added: true` for a new member, 200 with `added: false` for one already there. An invite to sign in is emailed after the response unless `sendEmail` is false. A plan's group: 422 `plan_group`; a deleted account: 409 `deleted_identity`."
      )
      .pipe(scope("end_users:write"))
  )
  .add(
    HttpApiEndpoint.del("removeMember", "/user-groups/:groupId/members/:endUserId")
      .setPath(MemberPath)
      .addSuccess(MemberRemoved)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.PlanGroupLocked)
      .annotate(OpenApi.Summary, "Remove a member from a user group")
      .annotate(
        OpenApi.Description,
        "Idempotent: `removed` is false when the person was not a member. Group-granted access stops; the account and its plans are untouched. A plan's group: 409 `plan_group`."
      )
      .pipe(scope("end_users:write"))
  )
  .add(
    HttpApiEndpoint.post("addGrant", "/user-groups/:groupId/grants")
      .setPath(GroupPath)
      .setPayload(AddGrant)
      .addSuccess(grantAdded(true, "UserGroupGrantCreated"), { status: 201 })
      .addSuccess(grantAdded(false, "UserGroupGrantHeld"))
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.PortalScopeUnsupported)
      .addError(ErrorResponse.GrantTargetNotFound)
      .annotate(OpenApi.Summary, "Grant a user group access")
      .annotate(
        OpenApi.Description,
        "Additive: `app` (an App, Flow or Agent) or `suite` (every App in it). 201 `created: true` for a new grant, 200 `created: false` with the held grant's id. The target is checked before any write (422 `grant_target_not_found`); `deploymentId` is 400 `portal_scope_unsupported`."
      )
      .pipe(scope("end_users:write"))
  )
  .add(
    HttpApiEndpoint.del("removeGrant", "/user-groups/:groupId/grants/:grantId")
      .setPath(GrantPath)
      .addSuccess(Ok)
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Remove a grant from a user group")
      .annotate(
        OpenApi.Description,
        "Removes one grant from the group: its members no longer get what that grant gave through this group. A grant id the group does not have is `not_found`. Answers `{ok: true}`."
      )
      .pipe(scope("end_users:write"))
  )
  .middleware(Authentication)
  .pipe(gate("groups")) {}

/** The `userGroups` group's slice of the contract. */
export const UserGroupsContract = featureContract(UserGroupsApi)
