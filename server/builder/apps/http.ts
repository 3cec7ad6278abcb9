/** HTTP handlers of the Apps endpoints: thin adapters over `AppService`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentPrincipal } from "../../platform/http/authentication.js"
import { parseFields, project } from "../../platform/pagination.js"
import { AppsContract } from "./api.js"
import { draftAppFields, publishedAppFields } from "./domain.js"
import { AppService } from "./service.js"

/** Handlers of the `apps` group. */
export const AppsHttpLive = HttpApiBuilder.group(AppsContract, "apps", (handlers) =>
  Effect.gen(function* () {
    const apps = yield* AppService
    return handlers.handle("list", ({ urlParams }) =>
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
  })
)
