/** The run endpoints of the contract: Agent conversation turns (published and draft), executions, conversations. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { answeredOnRequest, featureContract } from "../../http/contract.js"
import { Authentication } from "../../http/authentication.js"
import { ErrorResponse } from "../../http/error-responses.js"
import { anyScope, scope } from "../../http/policy.js"
import { ListOf, listQuery } from "../../platform/pagination.js"
import { Conversation, ConversationReply, ConversationTurn, DetachedRun, Execution, Message } from "./domain.js"
import { detachNote, ExecutionEventsHeaders, ExecutionEventsQuery, RunEventStream } from "./event-api.js"

const IdPath = Schema.Struct({ id: Schema.String })

/** The scopes that run something, any one of which reads executions and conversations (each list narrows by kind). */
export const executeScopes = ["agents:execute", "flows:execute", "apps:execute"] as const

const streamNote =
  "With `stream: true` the answer is `text/event-stream`: `event: start` (`{executionId, conversation_id}`, sent before the model answers), `event: delta` (`{text}`), `event: tool` (`{name}`), then exactly one `event: done` (this answer) or `event: error` (the error envelope); a `: keep-alive` comment every 15 s."

/** `/agents/{id}/conversation`, `/agents/{id}/draft/run`, `/executions/{id}` (and its `cancel`), `/conversations/{id}` */
export class RunsApi extends HttpApiGroup.make("runs")
  .annotate(OpenApi.Description, "Talking to an Agent (its published version or its draft), and the executions and conversations runs leave.")
  .add(
    HttpApiEndpoint.post("agentConversation", "/agents/:id/conversation")
      .setPath(IdPath)
      .setPayload(ConversationTurn)
      .addSuccess(ConversationReply)
      .addSuccess(answeredOnRequest(DetachedRun), { status: 202 })
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InsufficientCredits)
      .addError(ErrorResponse.RunFailed)
      .addError(ErrorResponse.RunCancelled)
      .annotate(OpenApi.Summary, "Talk to an Agent")
      .annotate(
        OpenApi.Description,
        `Runs the Agent's published version on \`message\` (a never-published Agent is \`not_found\`), continuing \`conversation_id\` when given (prior turns restored on the server). One execution and one credit per call; \`insufficient_credits\` before anything runs; a failed run charges nothing. ${streamNote} ${detachNote}`
      )
      .pipe(scope("agents:execute"))
  )
  .add(
    HttpApiEndpoint.post("agentDraftRun", "/agents/:id/draft/run")
      .setPath(IdPath)
      .setPayload(ConversationTurn)
      .addSuccess(ConversationReply)
      .addSuccess(answeredOnRequest(DetachedRun), { status: 202 })
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InsufficientCredits)
      .addError(ErrorResponse.RunFailed)
      .addError(ErrorResponse.RunCancelled)
      .annotate(OpenApi.Summary, "Run an Agent's draft")
      .annotate(OpenApi.Description, `Like the conversation endpoint, on the draft. ${streamNote} ${detachNote}`)
      .pipe(scope("agents:write"))
  )
  .add(
    HttpApiEndpoint.get("getExecution", "/executions/:id")
      .setPath(IdPath)
      .setUrlParams(
        Schema.Struct({
          view: Schema.optional(
            Schema.Literal("summary", "full").annotations({
              description: "`summary` leaves out tool arguments; `full` adds `trace`, each step in order with its timing (model calls, tool calls and their results, an App's routing, a transaction's validation).",
              message: () => ({ message: 'must be "summary" or "full"', override: true })
            })
          )
        }).annotations({ parseOptions: { onExcessProperty: "error", errors: "all" } })
      )
      .addSuccess(Schema.Struct({ execution: Execution }).annotations({ identifier: "ExecutionResponse" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Read an execution")
      .annotate(
        OpenApi.Description,
        "What ran and at which version, its steps and tools called, credits, timings and outcome; with `view=full` also its `trace`. Any `:execute` scope."
      )
      .pipe(anyScope(...executeScopes))
  )
  .add(
    HttpApiEndpoint.post("cancelExecution", "/executions/:id/cancel")
      .setPath(IdPath)
      .addSuccess(Schema.Struct({ ok: Schema.Literal(true), execution: Execution }).annotations({ identifier: "ExecutionCancelResponse" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Cancel an execution")
      .annotate(
        OpenApi.Description,
        "A running execution stops: it is recorded `cancelled` (nothing charged, a partial reply kept) before this answers, and its caller gets 409 `run_cancelled` (streamed: a final `event: error` with that code). A finished execution is answered unchanged. Any `:execute` scope."
      )
      .pipe(anyScope(...executeScopes))
  )
  .add(
    HttpApiEndpoint.get("executionEvents", "/executions/:id/events")
      .setPath(IdPath)
      .setUrlParams(ExecutionEventsQuery)
      .setHeaders(ExecutionEventsHeaders)
      .addSuccess(RunEventStream)
      .addError(ErrorResponse.InvalidRequest)
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Follow an execution's events")
      .annotate(
        OpenApi.Description,
        "The events of a streamed or detached run as `text/event-stream`, each with its `id` (its position in the run): from the start, or after `Last-Event-ID` (or `after`), then live until its one `done` or `error`; a `: keep-alive` comment every 15 s. Events are kept 24 hours; a run answered whole keeps none (`not_found`). Needs the `:execute` scope of the execution's kind (a transaction's is `apps:execute`; else `insufficient_scope`)."
      )
      .pipe(anyScope(...executeScopes))
  )
  .add(
    HttpApiEndpoint.get("getConversation", "/conversations/:id")
      .setPath(IdPath)
      .addSuccess(Schema.Struct({ conversation: Conversation }).annotations({ identifier: "ConversationResponse" }))
      .addError(ErrorResponse.NotFound)
      .annotate(OpenApi.Summary, "Read a conversation")
      .annotate(OpenApi.Description, "Needs the `:execute` scope of the conversation's target kind (else `insufficient_scope`).")
      .pipe(anyScope(...executeScopes))
  )
  .add(
    HttpApiEndpoint.get("listMessages", "/conversations/:id/messages")
      .setPath(IdPath)
      .setUrlParams(listQuery({}))
      .addSuccess(ListOf("messages", Message).annotations({ identifier: "MessageList" }))
      .addError(ErrorResponse.NotFound)
      .addError(ErrorResponse.InvalidRequest)
      .annotate(OpenApi.Summary, "List a conversation's messages")
      .annotate(OpenApi.Description, "Oldest first. Needs the `:execute` scope of the conversation's target kind (else `insufficient_scope`).")
      .pipe(anyScope(...executeScopes))
  )
  .middleware(Authentication) {}

/** The `runs` group's slice of the contract. */
export const RunsContract = featureContract(RunsApi)
