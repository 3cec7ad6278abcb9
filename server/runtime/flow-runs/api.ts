/** The Flow run endpoints of the contract: `POST /flows/{id}/run` and `POST /flows/{id}/draft/run`. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { answeredOnRequest, featureContract } from "../../http/contract.js"
import { Authentication } from "../../http/authentication.js"
import { ErrorResponse } from "../../http/error-responses.js"
import { scope } from "../../http/policy.js"
import { FlowRunAnswer, FlowRunRequest } from "./domain.js"
import { DetachedRun } from "../runs/domain.js"
import { detachNote } from "../runs/event-api.js"

const IdPath = Schema.Struct({ id: Schema.String })
const runNote =
  "A Flow with questions takes `inputs` (validated against its `inputsSchema` before anything runs or is charged; one 400 names every problem) and answers `{executionId, output, variables}`. A Flow without questions takes `message` and `conversation_id` and answers `{reply, conversation_id, executionId}`, like an Agent. One execution and one credit per run; `insufficient_credits` before anything runs; a failed run (`run_failed`) charges nothing. With `stream: true` the answer is `text/event-stream`: `event: start` (`{executionId}`, plus `conversation_id` for a Flow without questions), `event: tool` (`{name}`: each step as it starts), `event: delta` (`{text}`: the output), then exactly one `event: done` (this answer) or `event: error` (the error envelope); a `: keep-alive` comment every 15 s."

const runEndpoint = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path) =>
  HttpApiEndpoint.post(name, path)
    .setPath(IdPath)
    .setPayload(FlowRunRequest)
    .addSuccess(FlowRunAnswer)
    .addSuccess(answeredOnRequest(DetachedRun), { status: 202 })
    .addError(ErrorResponse.InvalidRequest)
    .addError(ErrorResponse.NotFound)
    .addError(ErrorResponse.InsufficientCredits)
    .addError(ErrorResponse.RunFailed)
    .addError(ErrorResponse.RunCancelled)

/** `/flows/{id}/run`, `/flows/{id}/draft/run` */
export class FlowRunsApi extends HttpApiGroup.make("flowRuns")
  .annotate(OpenApi.Description, "Running a Flow: its published version, or its draft to try it.")
  .add(
    runEndpoint("runFlow", "/flows/:id/run")
      .annotate(OpenApi.Summary, "Run a Flow")
      .annotate(OpenApi.Description, `Runs the Flow's published version (a never-published Flow is \`not_found\`). ${runNote} ${detachNote}`)
      .pipe(scope("flows:execute"))
  )
  .add(
    runEndpoint("runFlowDraft", "/flows/:id/draft/run")
      .annotate(OpenApi.Summary, "Run a Flow's draft")
      .annotate(OpenApi.Description, `Like the run endpoint, on the draft. ${runNote} ${detachNote}`)
      .pipe(scope("flows:write"))
  )
  .middleware(Authentication) {}

/** The `flowRuns` group's slice of the contract. */
export const FlowRunsContract = featureContract(FlowRunsApi)
