/** HTTP handlers of the run endpoints: thin adapters over `RunService`; `stream: true` answers SSE. */
import { Effect } from "effect"
import type { Principal } from "../../identity/domain.js"
import { deliverWhole } from "../model.js"
import { CurrentPrincipal } from "../../http/authentication.js"
import { RunsContract } from "./api.js"
import type { ConversationTurn } from "./domain.js"
import { RunService } from "./service.js"
import { RunSettings } from "./settings.js"
import { detachRun, followedRun, oneAnswer, resumedAfter, streamRun } from "./sse.js"
import { RunEventFeed } from "./event-follow.js"
import { serveGroup } from "../../http/served-groups.js"

/** Handlers of the `runs` group. */
export const RunsHttpLive = serveGroup(RunsContract, "runs", (handlers) =>
  Effect.gen(function* () {
    const runs = yield* RunService
    const feed = yield* RunEventFeed
    const { keepAliveMs } = yield* RunSettings

    /** A turn: checks first (refusals answer as JSON), then the run, streamed or not. */
    const agentTurn = (actor: Principal, agentId: string, body: ConversationTurn, draft: boolean) =>
      Effect.gen(function* () {
        yield* oneAnswer(body)
        if (body.stream !== true && body.detach !== true) {
          return yield* deliverWhole(Effect.flatMap(runs.prepareAgentTurn(actor, agentId, body, { draft }), (prepared) => runs.runAgentTurn(prepared)))
        }
        const prepared = yield* runs.prepareAgentTurn(actor, agentId, body, { draft })
        if (body.detach === true) return yield* detachRun((onEvent) => runs.runAgentTurn(prepared, onEvent))
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
      .handle("executionEvents", ({ path, urlParams, headers }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          const after = yield* resumedAfter(headers["last-event-id"], urlParams.after)
          return followedRun(yield* feed.follow(actor, path.id, after), keepAliveMs)
        })
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
