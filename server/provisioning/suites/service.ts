/**
 * Suites, made by administration (`svc suites create`): a name and the organization's Apps it
 * bundles, each App at most once. Knows nothing of HTTP.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { AppClock, isoAt } from "../../platform/clock.js"
import { InvalidRequest, NotFound } from "../../platform/errors.js"
import { newId } from "../../platform/ids.js"
import { transactionsOn } from "../../platform/sql/database.js"
import { referenceProblems, refuseProblems } from "../../builder/versions/references.js"
import type { CreateSuite, Suite } from "./domain.js"
import { SuiteRepo } from "./repo.js"

/** Suite operations for an organization. */
export class SuiteService extends Effect.Service<SuiteService>()("svc/SuiteService", {
  effect: Effect.gen(function* () {
    const repo = yield* SuiteRepo
    const clock = yield* AppClock
    const inTransaction = transactionsOn(yield* SqlClient.SqlClient)
    return {
      /** Creates a Suite of the organization's Apps (every unknown or repeated id named, nothing written). */
      create: (organizationId: string, input: CreateSuite): Effect.Effect<Suite, InvalidRequest> =>
        inTransaction(
          Effect.gen(function* () {
            const name = input.name.trim()
            if (name.length === 0 || name.length > 200) return yield* new InvalidRequest({ message: "name must be 1 to 200 characters." })
            const found = yield* repo.existingApps(organizationId, input.appIds)
            yield* refuseProblems(referenceProblems([{ field: "appIds", noun: "App", ids: input.appIds, found }]))
            const suite = { id: newId(), name, appIds: [...input.appIds] }
            yield* repo.insert(organizationId, suite, isoAt(clock.now()))
            return suite
          })
        ),

      /** Every Suite of the organization with its Apps in order, oldest first: administration's listing. */
      all: (organizationId: string): Effect.Effect<ReadonlyArray<Suite>> => repo.all(organizationId),

      /** The Suite of the organization. */
      get: (organizationId: string, id: string): Effect.Effect<Suite, NotFound> =>
        Effect.flatMap(repo.find(organizationId, id), (suite) =>
          suite ? Effect.succeed(suite) : Effect.fail(new NotFound({ message: `No Suite '${id}' in this organization.` }))
        )
    }
  }),
  dependencies: [SuiteRepo.Default]
}) {}
