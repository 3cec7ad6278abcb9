/** HTTP handlers of the App run endpoints: thin adapters over `AppRunService`; `stream: true` answers SSE. */
import { Effect } from "effect"
import { deliverWhole } from "../model.js"
import type { Principal } from "../../identity/domain.js"
import { CurrentPrincipal } from "../../http/authentication.js"
import type { ConversationTurn } from "../runs/domain.js"
import { RunSettings } from "../runs/settings.js"
import { detachRun, oneAnswer, streamRun } from "../runs/sse.js"
import { AppRunsContract } from "./api.js"
import { AppRunService } from "./service.js"
import { serveGroup } from "../../http/served-groups.js"

/** Handlers of the `appRuns` group. */
export const AppRunsHttpLive = serveGroup(AppRunsContract, "appRuns", (handlers) =>
  Effect.gen(function* () {
    const appRuns = yield* AppRunService
    const { keepAliveMs } = yield* RunSettings

    /** A turn: checks first (refusals answer as JSON), then the run, streamed or not. */
    const appTurn = (actor: Principal, appId: string, body: ConversationTurn, draft: boolean) =>
      Effect.gen(function* () {
        yield* oneAnswer(body)
        const prepared = yield* appRuns.prepareTurn(actor, appId, body, { draft })
        if (body.detach === true) return yield* detachRun((onEvent) => appRuns.runTurn(prepared, onEvent))
        if (body.stream === true) return yield* streamRun((onEvent) => appRuns.runTurn(prepared, onEvent), keepAliveMs)
        return yield* deliverWhole(appRuns.runTurn(prepared))
      })

    return handlers
      .handle("appConversation", ({ path, payload }) => Effect.flatMap(CurrentPrincipal, (actor) => appTurn(actor, path.id, payload, false)))
      .handle("appDraftRun", ({ path, payload }) => Effect.flatMap(CurrentPrincipal, (actor) => appTurn(actor, path.id, payload, true)))
      .handle("appTransaction", ({ path, payload }) => Effect.flatMap(CurrentPrincipal, (actor) => deliverWhole(appRuns.transaction(actor, path.id, payload))))
  })
)
