/** The App run endpoints of the contract: conversation turns (published and draft) and transactions. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { answeredOnRequest, featureContract } from "../../http/contract.js"
import { Authentication } from "../../http/authentication.js"
import { ErrorResponse } from "../../http/error-responses.js"
import { gate, scope } from "../../http/policy.js"
import { ConversationTurn, DetachedRun } from "../runs/domain.js"
import { AppConversationReply, TransactionReply, TransactionRequest } from "./domain.js"
import { detachNote } from "../runs/event-api.js"

const IdPath = Schema.Struct({ id: Schema.String })
const streamNote =
  "With `stream: true` the answer is `text/event-stream`: `event: start` (`{executionId, conversation_id}`, sent before the model answers), `event: delta` (`{text}`), `event: tool` (`{name}`, the member asked is `ask_<name>`), then exactly one `event: done` (this answer) or `event: error` (the error envelope); a `: keep-alive` comment every 15 s."
const routingNote =
  "The Supervisor routes the message to one member Agent (with `builtin`, by matching the members' names and descriptions, the first member when none matches; with a language model, the members are its tools `ask_<name>`). `greeting` is the App's greeting on a conversation's first turn, null afterwards. One execution (kind `app`) and one credit per call; `insufficient_credits` before anything runs; a failed run charges nothing. An App without a published member Agent is `run_failed` before anything runs."

/** `/apps/{id}/conversation`, `/apps/{id}/draft/run`, `/apps/{id}/transaction`: 403 `api_disabled` until the `apps` gate is on. */
export class AppRunsApi extends HttpApiGroup.make("appRuns")
  .annotate(OpenApi.Description, "Running an App: a conversation, its draft, or its Transaction Service.")
  .add(
    HttpApiEndpoint.post("appConversation", "/apps/:id/conversation")
      .setPath(IdPath)
      .setPayload(ConversationTurn)
      .addSuccess(AppConversationReply)
      .addSuccess(answeredOnRequest(DetachedRun), { status: 202 })
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InsufficientCredits)
      .addError(ErrorResponse.RunFailed)
      .addError(ErrorResponse.RunCancelled)
      .annotate(OpenApi.Summary, "Talk to an App")
      .annotate(
        OpenApi.Description,
        `Runs the App's published version on \`message\` (a never-published App is \`not_found\`), its members at the versions it pinned, continuing \`conversation_id\` when given. ${routingNote} ${streamNote} ${detachNote}`
      )
      .pipe(scope("apps:execute"))
  )
  .add(
    HttpApiEndpoint.post("appDraftRun", "/apps/:id/draft/run")
      .setPath(IdPath)
      .setPayload(ConversationTurn)
      .addSuccess(AppConversationReply)
      .addSuccess(answeredOnRequest(DetachedRun), { status: 202 })
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InsufficientCredits)
      .addError(ErrorResponse.RunFailed)
      .addError(ErrorResponse.RunCancelled)
      .annotate(OpenApi.Summary, "Run an App's draft")
      .annotate(
        OpenApi.Description,
        `Like the conversation endpoint, on the draft: its greeting and its member Agents at their current published versions (a member never published is left out). ${routingNote} ${streamNote} ${detachNote}`
      )
      .pipe(scope("apps:write"))
  )
  .add(
    HttpApiEndpoint.post("appTransaction", "/apps/:id/transaction")
      .setPath(IdPath)
      .setPayload(TransactionRequest)
      .addSuccess(TransactionReply)
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InsufficientCredits)
      .addError(ErrorResponse.RunFailed)
      .addError(ErrorResponse.RunCancelled)
      .annotate(OpenApi.Summary, "Run an App's Transaction Service")
      .annotate(
        OpenApi.Description,
        "`input` is validated against the published `inputSchema` before anything runs (400 `invalid_request` naming every problem; 400 too when the published version has no Transaction Service). The Supervisor answers `JSON.stringify(input)` through one member Agent; the reply is made an object (a language model is asked for JSON; `builtin` fills an output schema with exactly one required string property with the member's reply) and validated against `outputSchema` before it is returned, else 502 `run_failed` and nothing is charged. One execution (kind `transaction`) and one credit."
      )
      .pipe(scope("apps:execute"))
  )
  .middleware(Authentication)
  .pipe(gate("apps")) {}

/** The `appRuns` group's slice of the contract. */
export const AppRunsContract = featureContract(AppRunsApi)
