/** HTTP handlers of the Apps endpoints: thin adapters over `AppService`. */
import { Effect } from "effect"
import { CurrentPrincipal } from "../../http/authentication.js"
import { declaredAnswer, idempotentCreate } from "../../http/responses.js"
import { parseFields, project } from "../../platform/pagination.js"
import { AppsContract } from "./api.js"
import { draftAppFields, publishedAppFields } from "./domain.js"
import { AppService } from "./service.js"
import { serveGroup } from "../../http/served-groups.js"

/** A created App as `create` declares it (stored for idempotent replays). */
const createdApp = declaredAnswer(AppsContract.groups["apps"]!.endpoints["create"]!.successSchema)

/** Handlers of the `apps` group. */
export const AppsHttpLive = serveGroup(AppsContract, "apps", (handlers) =>
  Effect.gen(function* () {
    const apps = yield* AppService
    return handlers
      .handle("list", ({ urlParams }) =>
      Effect.gen(function* () {
        const includeDrafts = urlParams.include === "drafts"
        const fields = yield* parseFields(urlParams.fields, includeDrafts ? draftAppFields : publishedAppFields)
        const page = yield* apps.list(yield* CurrentPrincipal, {
          includeDrafts,
          updatedSince: urlParams.updatedSince ?? null,
          limit: urlParams.limit,
          cursor: urlParams.cursor
        })
        return { apps: page.items.map((app) => project(app, fields)), nextCursor: page.nextCursor }
      })
      )
      .handle("create", ({ headers, payload, request }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          return yield* idempotentCreate(
            { key: headers["idempotency-key"], request, payload },
            Effect.map(apps.create(actor, payload), (app) => ({ app })),
            createdApp
          )
        })
      )
      .handle("get", ({ path }) => Effect.map(Effect.flatMap(CurrentPrincipal, (actor) => apps.get(actor, path.id)), (app) => ({ app })))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentPrincipal, (actor) => apps.remove(actor, path.id)))
      .handle("getDraft", ({ path }) => Effect.map(Effect.flatMap(CurrentPrincipal, (actor) => apps.draft(actor, path.id)), (app) => ({ app })))
      .handle("updateDraft", ({ path, payload }) =>
        Effect.map(Effect.flatMap(CurrentPrincipal, (actor) => apps.updateDraft(actor, path.id, payload)), (app) => ({ app }))
      )
      .handle("publish", ({ path }) => Effect.flatMap(CurrentPrincipal, (actor) => apps.publish(actor, path.id)))
  })
)
