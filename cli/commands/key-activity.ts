/**
 * `svc keys activity --org S KEY_ID`: a key's recent Knowledgebase activity, newest first: what was
 * searched (a fingerprint, never the text) or read, and what came back.
 */
import type { Command } from "commander"
import type { ActivityRecord } from "../../server/knowledge/activity/service.js"
import { admin } from "../admin.js"
import { type DataDirOptions, withDataDir } from "../options.js"
import { output } from "../output.js"
import { type Block, shortTime } from "../ui/blocks.js"
import type { CliIo } from "../io.js"
import { noteOrgLeftOut, orgHelp } from "../org-option.js"

interface ActivityOptions extends DataDirOptions {
  readonly org: string
  /** Only what came through this MCP connection. */
  readonly connection?: string | undefined
}

/** How many result titles the table shows per entry. */
const titlesShown = 3

/** The results column: the count and the first titles, `3: Refunds, Shipping, …`. */
export const resultsText = (record: ActivityRecord): string => {
  const titles = record.results.map((r) => r.title ?? r.id).slice(0, titlesShown)
  if (titles.length === 0) return String(record.resultCount)
  return `${record.resultCount}: ${titles.join(", ")}${record.resultCount > titles.length ? ", …" : ""}`
}

/** A key's activity, after checking the key belongs to the organization (else exit 1). */
const activityOf = async (io: CliIo, options: ActivityOptions, keyId: string) => {
  const [{ AccountsService }, { ActivityLog }, { NotFound }, Effect, Layer] = await Promise.all([
    import("../../server/identity/service.js"),
    import("../../server/knowledge/activity/service.js"),
    import("../../server/platform/errors.js"),
    import("effect/Effect"),
    import("effect/Layer")
  ])
  return admin(
    io,
    options,
    Layer.merge(AccountsService.Default, ActivityLog.Default),
    Effect.gen(function* () {
      const accounts = yield* AccountsService
      const org = yield* accounts.organization(options.org)
      const keys = yield* accounts.listKeys(options.org)
      if (!keys.some((key) => key.id === keyId)) {
        return yield* new NotFound({ message: `No key '${keyId}' in organization '${org.slug}' (see svc keys list --org ${org.slug}).` })
      }
      return yield* (yield* ActivityLog).forKey(org.id, keyId, undefined, options.connection)
    })
  )
}

const activity = async (io: CliIo, keyId: string, options: ActivityOptions) => {
  const records = await activityOf(io, options, keyId)
  await output(io, options, records, {
    json: (rs) => ({ activity: rs }),
    human: (rs): Array<Block> => [
      ...(rs.length === 0
        ? []
        : [{ kind: "title", tone: "info", text: `${rs.length} recent ${rs.length === 1 ? "entry" : "entries"} of key ${keyId}` } as const]),
      {
        kind: "table",
        ...(rs.some((r) => r.connectionId !== null)
          ? {
              columns: ["time", "via", "action", "knowledgebase", "fingerprint", "results"],
              rows: rs.map((r) => [shortTime(r.at), r.connectionId ?? "api", r.action, r.knowledgebaseId ?? "all", r.queryFingerprint ?? "-", resultsText(r)])
            }
          : {
              columns: ["time", "action", "knowledgebase", "fingerprint", "results"],
              rows: rs.map((r) => [shortTime(r.at), r.action, r.knowledgebaseId ?? "all", r.queryFingerprint ?? "-", resultsText(r)])
            }),
        empty: `No Knowledgebase activity of key ${keyId} yet.`
      },
      ...(rs.some((r) => r.queryFingerprint !== null)
        ? [{ kind: "note", text: "Search text is never stored: the same search shows the same fingerprint." } as const]
        : [])
    ]
  })
}

/** Registers `svc keys activity` on the `keys` group. */
export const keyActivityCommand = (keys: Command, io: CliIo): void => {
  withDataDir(
    keys
      .command("activity")
      .description("a key's recent Knowledgebase activity: searches (as fingerprints) and reads, newest first")
      .argument("<key-id>", "the key's id (see svc keys list)")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
      .option("--connection <id>", "only what came through this MCP connection (the `via` column: an MCP connection id, or api)")
  ).action((keyId: string, options: ActivityOptions) => activity(io, keyId, options))
}
