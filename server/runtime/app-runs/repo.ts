/** SQL of App runs: member Agents read at given versions (an App's pins, or the published ones for a draft run). */
import { Effect } from "effect"
import { ReadConnection } from "../../platform/sql/read-connection.js"

/** A member Agent's version row: who it is and the definition it ran with. */
export interface MemberAgentRow {
  readonly id: string
  readonly version: number
  readonly name: string
  readonly description: string
  readonly definition: string
}

/** Reads for App runs on the read connection; writes go through `RunService`. */
export class AppRunRepo extends Effect.Service<AppRunRepo>()("svc/AppRunRepo", {
  effect: Effect.gen(function* () {
    const reader = yield* ReadConnection
    return {
      /**
       * The Agents of the organization at the versions given, in the order given; a pin whose Agent
       * or version no longer exists is left out.
       */
      agentsAt: (organizationId: string, pins: ReadonlyArray<{ readonly id: string; readonly version: number }>) =>
        Effect.orDie(
          Effect.forEach(pins, (pin) =>
            reader
              .all<MemberAgentRow>(
                `SELECT a.id, v.version, v.name, v.description, v.definition FROM agents a
                  JOIN agent_versions v ON v.agent_id = a.id AND v.version = ?
                  WHERE a.organization_id = ? AND a.id = ?`,
                [pin.version, organizationId, pin.id]
              )
              .pipe(Effect.map((rows) => rows[0] ?? null))
          ).pipe(Effect.map((rows) => rows.filter((row): row is MemberAgentRow => row !== null)))
        ),

      /** The published versions of the organization's Agents among `ids`, in the order given; never-published or missing ones are left out. */
      publishedAgents: (organizationId: string, ids: ReadonlyArray<string>) =>
        Effect.orDie(
          Effect.forEach(ids, (id) =>
            reader
              .all<MemberAgentRow>(
                `SELECT a.id, v.version, v.name, v.description, v.definition FROM agents a
                  JOIN agent_versions v ON v.agent_id = a.id AND v.version = a.published_version
                  WHERE a.organization_id = ? AND a.id = ?`,
                [organizationId, id]
              )
              .pipe(Effect.map((rows) => rows[0] ?? null))
          ).pipe(Effect.map((rows) => rows.filter((row): row is MemberAgentRow => row !== null)))
        )
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
