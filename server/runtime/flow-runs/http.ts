/** HTTP handlers of the Flow run endpoints: thin adapters over `FlowRunService`; `stream: true` answers SSE. */
import { Effect } from "effect"
import { deliverWhole } from "../model.js"
import type { Principal } from "../../identity/domain.js"
import { CurrentPrincipal } from "../../http/authentication.js"
import { RunSettings } from "../runs/settings.js"
import { detachRun, oneAnswer, streamRun } from "../runs/sse.js"
import { FlowRunsContract } from "./api.js"
import type { FlowRunRequest } from "./domain.js"
import { FlowRunService } from "./service.js"
import { serveGroup } from "../../http/served-groups.js"

/** Handlers of the `flowRuns` group. */
export const FlowRunsHttpLive = serveGroup(FlowRunsContract, "flowRuns", (handlers) =>
  Effect.gen(function* () {
    const runs = yield* FlowRunService
    const { keepAliveMs } = yield* RunSettings

    /** A run: checks first (refusals answer as JSON), then the run, streamed or not. */
    const run = (actor: Principal, flowId: string, body: FlowRunRequest, draft: boolean) =>
      Effect.gen(function* () {
        yield* oneAnswer(body)
        const prepared = yield* runs.prepareFlowRun(actor, flowId, body, { draft })
        if (body.detach === true) return yield* detachRun((onEvent) => runs.runFlow(prepared, onEvent))
        if (body.stream === true) return yield* streamRun((onEvent) => runs.runFlow(prepared, onEvent), keepAliveMs)
        return yield* deliverWhole(runs.runFlow(prepared))
      })

    return handlers
      .handle("runFlow", ({ path, payload }) => Effect.flatMap(CurrentPrincipal, (actor) => run(actor, path.id, payload, false)))
      .handle("runFlowDraft", ({ path, payload }) => Effect.flatMap(CurrentPrincipal, (actor) => run(actor, path.id, payload, true)))
  })
)
