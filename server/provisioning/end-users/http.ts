/** HTTP handlers of the end-user endpoints: thin adapters over `EndUserService`. */
import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CurrentPrincipal } from "../../http/authentication.js"
import { declaredAnswer, idempotentCreate } from "../../http/responses.js"
import { EndUsersContract } from "./api.js"
import { perUserGrantsDeprecation } from "./domain.js"
import { EndUserService } from "./service.js"
import { serveGroup } from "../../http/served-groups.js"

/** A provisioned account as `provision` declares it (201 created, 200 updated), stored for idempotent replays. */
const provisionedAnswer = declaredAnswer(EndUsersContract.groups["endUsers"]!.endpoints["provision"]!.successSchema)

/** Marks the response as about a deprecated feature (per-user grants). */
const markDeprecated = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "deprecation", perUserGrantsDeprecation))
)

/** Handlers of the `endUsers` group. */
export const EndUsersHttpLive = serveGroup(EndUsersContract, "endUsers", (handlers) =>
  Effect.gen(function* () {
    const endUsers = yield* EndUserService
    const as = <A, E, R>(use: (actor: Effect.Effect.Success<typeof CurrentPrincipal>) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(CurrentPrincipal, use)
    return handlers
      .handle("provision", ({ headers, payload, request }) =>
        Effect.gen(function* () {
          if (payload.grants !== undefined) yield* markDeprecated
          const actor = yield* CurrentPrincipal
          const key = headers["idempotency-key"]
          if (key === undefined) return yield* endUsers.provision(actor, payload)
          return yield* idempotentCreate({ key, request, payload }, endUsers.provisionWithin(actor, payload), provisionedAnswer)
        })
      )
      .handle("list", ({ urlParams }) =>
        Effect.map(as((actor) => endUsers.list(actor, urlParams)), (page) => ({ endUsers: page.items, nextCursor: page.nextCursor }))
      )
      .handle("get", ({ path }) => Effect.map(as((actor) => endUsers.get(actor, path.endUserId)), (endUser) => ({ endUser })))
      .handle("revoke", ({ path }) => as((actor) => endUsers.revoke(actor, path.endUserId)))
      .handle("delete", ({ path }) => as((actor) => endUsers.remove(actor, path.endUserId)))
      .handle("removeSubscription", ({ path }) => as((actor) => endUsers.removeSubscription(actor, path.endUserId, path.subscriptionId)))
      .handle("adjustBonusCredits", ({ path, payload }) =>
        as((actor) => endUsers.adjustBonusCredits(actor, path.endUserId, path.subscriptionId, payload))
      )
      .handle("removeGrant", ({ path }) =>
        Effect.zipRight(markDeprecated, as((actor) => endUsers.removeGrant(actor, path.endUserId, path.grantId)))
      )
  })
)
