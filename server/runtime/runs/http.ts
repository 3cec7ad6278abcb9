/** HTTP handlers of the run endpoints: thin adapters over `RunService`; `stream: true` answers SSE. */
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { deliverWhole } from "../model.js"
import { CurrentPrincipal } from "../../http/authentication.js"
import { RunsContract } from "./api.js"
import type { ConversationTurn } from "./domain.js"
import { RunService } from "./service.js"
import { RunSettings } from "./settings.js"
import { streamRun } from "./sse.js"
import { serveGroup } from "../../http/served-groups.js"

/** Handlers of the `runs` group. */
export const RunsHttpLive = serveGroup(RunsContract, "runs", (handlers) =>
  Effect.gen(function* () {
    const runs = yield* RunService
    const { keepAliveMs } = yield* RunSettings

    /** A turn: checks first (refusals answer as JSON), then the run, streamed or not. */
    const agentTurn = (actor: Principal, agentId: string, body: ConversationTurn, draft: boolean) =>
      Effect.gen(function* () {
        if (body.stream !== true) return yield* deliverWhole(Effect.flatMap(runs.prepareAgentTurn(actor, agentId, body, { draft }), (prepared) => runs.runAgentTurn(prepared)))
        const prepared = yield* runs.prepareAgentTurn(actor, agentId, body, { draft })
        return yield* streamRun((onEvent) => runs.runAgentTurn(prepared, onEvent), keepAliveMs)
      })

    return handlers
      .handle("agentConversation", ({ path, payload }) => Effect.flatMap(CurrentPrincipal, (actor) => agentTurn(actor, path.id, payload, false)))
      .handle("agentDraftRun", ({ path, payload }) => Effect.flatMap(CurrentPrincipal, (actor) => agentTurn(actor, path.id, payload, true)))
      .handle("getExecution", ({ path, urlParams }) =>
        Effect.map(
          Effect.flatMap(CurrentPrincipal, (actor) => runs.execution(actor, path.id, urlParams.view === "summary", urlParams.view === "full")),
          (execution) => ({ execution })
        )
      )
      .handle("cancelExecution", ({ path }) =>
        Effect.map(Effect.flatMap(CurrentPrincipal, (actor) => runs.cancelExecution(actor, path.id)), (execution) => ({ ok: true as const, execution }))
      )
      .handle("getConversation", ({ path }) =>
        Effect.map(Effect.flatMap(CurrentPrincipal, (actor) => runs.conversation(actor, path.id)), (conversation) => ({ conversation }))
      )
      .handle("listMessages", ({ path, urlParams }) =>
        Effect.map(
          Effect.flatMap(CurrentPrincipal, (actor) => runs.messages(actor, path.id, urlParams)),
          (page) => ({ messages: page.items, nextCursor: page.nextCursor })
        )
      )
  })
)
