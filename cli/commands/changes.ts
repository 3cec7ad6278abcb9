/**
 * `svc changes tail`: follows a Knowledgebase's changes feed (or `all`) through the API, one line per
 * change. With `--json` it prints JSON Lines (one change object per line), since a follow never ends
 * with one document. Stops cleanly (exit 0) on SIGINT or SIGTERM (a second one quits at once with 130,
 * see main.ts); `--once` stops at the feed's end.
 */
import { type Command, InvalidArgumentError } from "commander"
import { setTimeout as sleep } from "node:timers/promises"
import type { KnowledgebasesChangesItem, KnowledgebasesChangesResponse, Svc } from "../../sdk/index.js"
import { type ApiOptions, withApi, withClient } from "../api.js"
import { isInteractive, progress } from "../output.js"
import { parsePositive } from "../options.js"
import type { CliIo } from "../io.js"

interface TailOptions extends ApiOptions {
  readonly since?: string
  readonly interval?: number
  readonly once?: boolean
  readonly limit?: number
}

/** A change as one line for people: `<changedAt>  <type> <change>  <id>  kb <knowledgebaseId>`. */
export const changeLine = (change: KnowledgebasesChangesItem): string =>
  `${change.changedAt}  ${change.type.padEnd(6)} ${change.change.padEnd(7)}  ${change.id}  kb ${change.knowledgebaseId}`

const parseSince = (value: string): string => {
  if (Number.isNaN(Date.parse(value))) throw new InvalidArgumentError("Expected a date-time, like 2026-11-21T12:00:00Z.")
  return value
}

/** Aborts on the first stop request (SIGINT or SIGTERM); `release` stops listening. */
const stopOnRequest = (io: CliIo) => {
  const controller = new AbortController()
  const release = io.onStop(() => controller.abort(new Error("stopped")))
  return { signal: controller.signal, release }
}

/** Pages through the feed and then polls its tail until `signal` aborts (or the end, with `once`). */
const follow = async (io: CliIo, client: Svc, knowledgebaseId: string, options: TailOptions, signal: AbortSignal) => {
  const print = (change: KnowledgebasesChangesItem) =>
    io.stdout.write(`${options.json ? JSON.stringify(change) : changeLine(change)}\n`)
  let cursor: string | undefined
  for (;;) {
    const query = cursor === undefined ? { since: options.since, limit: options.limit } : { cursor, limit: options.limit }
    const page: KnowledgebasesChangesResponse = await client.knowledgebases.changes(knowledgebaseId, query, { signal })
    for (const change of page.changes) print(change)
    cursor = page.nextCursor ?? page.tailCursor
    if (page.nextCursor !== null) continue
    if (options.once) return
    await sleep(options.interval ?? 1000, undefined, { signal })
  }
}

const tail = async (io: CliIo, knowledgebaseId: string, options: TailOptions) => {
  await withClient(io, options, async (client) => {
    const stop = stopOnRequest(io)
    if (isInteractive(io) && !options.once) progress(io, `Following the changes of ${knowledgebaseId}; press Ctrl+C to stop.`)
    try {
      await follow(io, client, knowledgebaseId, options, stop.signal)
    } catch (error) {
      if (!stop.signal.aborted) throw error
    } finally {
      stop.release()
    }
  })
}

/** Registers `svc changes`. */
export const changesCommands = (program: Command, io: CliIo): void => {
  const changes = program.command("changes").description("the changes feed of Knowledgebases, through the API")
  withApi(
    changes
      .command("tail")
      .description("print the changes feed, then follow it (--json: one JSON object per line)")
      .argument("<knowledgebase-id>", "a Knowledgebase id, or 'all'")
      .option("--since <date-time>", "start from changes at or after this time (default: the beginning)", parseSince)
      .option("--interval <ms>", "milliseconds between polls at the end of the feed (default: 1000)", parsePositive)
      .option("--limit <n>", "changes per request, 1 to 200 (default: 50)", parsePositive)
      .option("--once", "print what is there and exit"),
    "print JSON Lines on stdout: one change object per line"
  ).action((id: string, options: TailOptions) => tail(io, id, options))
}
