/** HTTP handlers of the organization's lists of runs: thin adapters over `RunLists`; the export streams JSON Lines. */
import { HttpServerResponse } from "@effect/platform"
import { Effect, Stream } from "effect"
import { CurrentPrincipal } from "../http/authentication.js"
import { serveGroup } from "../http/served-groups.js"
import { exportContentType, RunListsContract } from "./api.js"
import { RunLists } from "./service.js"

const encoder = new TextEncoder()

/** Handlers of the `runLists` group. */
export const RunListsHttpLive = serveGroup(RunListsContract, "runLists", (handlers) =>
  Effect.gen(function* () {
    const lists = yield* RunLists
    return handlers
      .handle("listConversations", ({ urlParams }) =>
        Effect.map(
          Effect.flatMap(CurrentPrincipal, (actor) => lists.conversations(actor, urlParams)),
          (page) => ({ conversations: page.items, nextCursor: page.nextCursor })
        )
      )
      .handle("exportConversation", ({ path }) =>
        Effect.gen(function* () {
          const lines = yield* lists.exportConversation(yield* CurrentPrincipal, path.id)
          return HttpServerResponse.stream(
            Stream.map(lines, (line) => encoder.encode(`${JSON.stringify(line)}\n`)),
            {
              contentType: exportContentType,
              headers: { "content-disposition": `attachment; filename="conversation-${path.id.replace(/[^\w-]/g, "_")}.ndjson"` }
            }
          )
        })
      )
      .handle("listExecutions", ({ urlParams }) =>
        Effect.map(
          Effect.flatMap(CurrentPrincipal, (actor) => lists.executions(actor, urlParams)),
          (page) => ({ executions: page.items, nextCursor: page.nextCursor })
        )
      )
  })
)
