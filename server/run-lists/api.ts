/** The contract of the organization's lists of runs: `GET /conversations`, `GET /conversations/{id}/export`, `GET /executions`. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../http/authentication.js"
import { featureContract } from "../http/contract.js"
import { ErrorResponse } from "../http/error-responses.js"
import { anyScope } from "../http/policy.js"
import { ListOf, listQuery, OneOfParam, UpdatedSinceParam, UuidParam } from "../platform/pagination.js"
import { executeScopes } from "../runtime/runs/api.js"
import { Execution, ExecutionKind, ExecutionStatus, TargetKind } from "../runtime/runs/domain.js"
import { ConversationSummary } from "./domain.js"

/** The content type of a conversation's export: JSON Lines. */
export const exportContentType = "application/x-ndjson"

/** `/conversations`, `/conversations/{id}/export`, `/executions` */
export class RunListsApi extends HttpApiGroup.make("runLists")
  .annotate(OpenApi.Description, "The organization's conversations and executions as lists, and a conversation's export (issue 25: runs to follow).")
  .add(
    HttpApiEndpoint.get("listConversations", "/conversations")
      .setUrlParams(
        listQuery({
          targetKind: OneOfParam(TargetKind),
          targetId: UuidParam("targetId"),
          endUserId: UuidParam("endUserId"),
          since: UpdatedSinceParam
        })
      )
      .addSuccess(ListOf("conversations", ConversationSummary).annotations({ identifier: "ConversationList" }))
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "List the organization's conversations")
      .annotate(
        OpenApi.Description,
        "Newest activity first (`lastActivityAt`, then id), each with who started it (`startedBy`: an organization key, a member, an end user at a Portal, or `unrecorded` for one started before svc recorded it), its target and turn count. `since` keeps those active at or after it; `endUserId` those the end user holds at a Portal. Each kind's `:execute` scope lists that kind's conversations (`targetKind` without its scope is `insufficient_scope`). Organization keys and admins' personal keys list the whole organization's; other members' personal keys the conversations they started."
      )
      .pipe(anyScope(...executeScopes))
  )
  .add(
    HttpApiEndpoint.get("exportConversation", "/conversations/:id/export")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(HttpApiSchema.Text({ contentType: exportContentType }).annotations({ description: "JSON Lines: one message or execution per line." }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Export a conversation")
      .annotate(
        OpenApi.Description,
        'Streamed `application/x-ndjson`, in order: `{"type":"message",id,role,text,executionId,createdAt}` for each message and `{"type":"execution",…Execution}` (tool arguments included) for each execution, on the line before its first message. Needs the `:execute` scope of the conversation\'s target kind (else `insufficient_scope`).'
      )
      .pipe(anyScope(...executeScopes))
  )
  .add(
    HttpApiEndpoint.get("listExecutions", "/executions")
      .setUrlParams(
        listQuery({
          kind: OneOfParam(ExecutionKind),
          status: OneOfParam(ExecutionStatus),
          since: UpdatedSinceParam
        })
      )
      .addSuccess(ListOf("executions", Execution).annotations({ identifier: "ExecutionList" }))
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "List the organization's executions")
      .annotate(
        OpenApi.Description,
        "Newest activity first (`finishedAt`, else `startedAt`, then id), in summary view; `since` keeps those that started or finished at or after it, which is how `svc runs tail` follows runs. Each kind's `:execute` scope lists that kind's executions (a `transaction` is an App's); `kind` without its scope is `insufficient_scope`."
      )
      .pipe(anyScope(...executeScopes))
  )
  .middleware(Authentication) {}

/** The `runLists` group's slice of the contract. */
export const RunListsContract = featureContract(RunListsApi)
