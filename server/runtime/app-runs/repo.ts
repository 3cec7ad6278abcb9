/**
 * SQL of App runs: member Agents and Flows read at given versions (an App's pins, or the published
 * ones for a draft run).
 */
import { Effect } from "effect"
import { ReadConnection } from "../../platform/sql/read-connection.js"

/** A member's version row: who it is and the definition it runs with. */
export interface MemberVersionRow {
  readonly id: string
  readonly version: number
  readonly name: string
  readonly description: string
  readonly definition: string
}

/** The kinds of member an App has, each with its item and version tables. */
export type MemberKind = "agent" | "flow"

const tables: Record<MemberKind, { readonly items: string; readonly versions: string; readonly key: string }> = {
  agent: { items: "agents", versions: "agent_versions", key: "agent_id" },
  flow: { items: "flows", versions: "flow_versions", key: "flow_id" }
}

/** Reads for App runs on the read connection; writes go through `RunService`. */
export class AppRunRepo extends Effect.Service<AppRunRepo>()("svc/AppRunRepo", {
  effect: Effect.gen(function* () {
    const reader = yield* ReadConnection

    /** One member's row at `version` (`published` for its published version), or null. */
    const memberRow = (kind: MemberKind, organizationId: string, id: string, version: number | "published") => {
      const { items, versions, key } = tables[kind]
      const pinned = version === "published" ? "v.version = i.published_version" : "v.version = ?"
      return reader
        .all<MemberVersionRow>(
          `SELECT i.id, v.version, v.name, v.description, v.definition FROM ${items} i
            JOIN ${versions} v ON v.${key} = i.id AND ${pinned}
            WHERE i.organization_id = ? AND i.id = ?`,
          version === "published" ? [organizationId, id] : [version, organizationId, id]
        )
        .pipe(Effect.map((rows) => rows[0] ?? null))
    }

    const present = (rows: ReadonlyArray<MemberVersionRow | null>) => rows.filter((row): row is MemberVersionRow => row !== null)

    return {
      /**
       * The members of `kind` at the versions given, in the order given; a pin whose item or
       * version no longer exists is left out.
       */
      membersAt: (kind: MemberKind, organizationId: string, pins: ReadonlyArray<{ readonly id: string; readonly version: number }>) =>
        Effect.orDie(Effect.forEach(pins, (pin) => memberRow(kind, organizationId, pin.id, pin.version)).pipe(Effect.map(present))),

      /** The published versions of the organization's items of `kind` among `ids`, in the order given; never-published or missing ones are left out. */
      publishedMembers: (kind: MemberKind, organizationId: string, ids: ReadonlyArray<string>) =>
        Effect.orDie(Effect.forEach(ids, (id) => memberRow(kind, organizationId, id, "published")).pipe(Effect.map(present)))
    }
  }),
  dependencies: [ReadConnection.Default]
}) {}
