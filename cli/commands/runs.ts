/**
 * `svc runs tail`: follows the organization's executions through the API as they start and finish,
 * one line each time one is seen in a new status (`running`, then how it ended). It polls
 * `GET /executions?since=W` (newest activity first; read oldest first here), `W` the latest activity
 * seen, from the current time or `--since`. With `--json`, JSON Lines: one execution object per line.
 * On a terminal the statuses are colored. Stops cleanly (exit 0) on SIGINT or SIGTERM; `--once`
 * prints what there is and exits.
 */
import { type Command, Option } from "commander"
import { setTimeout as sleep } from "node:timers/promises"
import type { RunListsListExecutionsItem, Svc } from "../../sdk/index.js"
import { type ApiOptions, withApi, withClient } from "../api.js"
import type { CliIo } from "../io.js"
import { isInteractive, progress } from "../output.js"
import { parsePositive } from "../options.js"
import { parseDateTime } from "./conversations.js"

type Execution = RunListsListExecutionsItem

interface TailOptions extends ApiOptions {
  readonly since?: string
  readonly kind?: Execution["kind"]
  readonly interval?: number
  readonly once?: boolean
}

/** When an execution last changed: its end, else its start (the list's order). */
export const activityOf = (execution: Execution): string => execution.finishedAt ?? execution.startedAt

/** An execution as one line for people: `<time>  <status> <kind> <id>  target <id>  [conversation <id>]  [error]`. */
export const executionLine = (execution: Execution): string =>
  [
    `${activityOf(execution)}  ${execution.status.padEnd(9)} ${execution.kind.padEnd(11)} ${execution.id}  target ${execution.targetId}`,
    execution.conversationId === null ? "" : `  conversation ${execution.conversationId}`,
    execution.error === null ? "" : `  ${execution.error}`
  ].join("")

const statusColor: Record<Execution["status"], number> = { running: 36, succeeded: 32, failed: 31, cancelled: 33 }

/** The line with its status colored (ANSI), for a terminal. */
const coloredLine = (execution: Execution): string => {
  const line = executionLine(execution)
  const at = line.indexOf(execution.status)
  return `${line.slice(0, at)}\u001b[${statusColor[execution.status]}m${execution.status}\u001b[39m${line.slice(at + execution.status.length)}`
}

/** Every execution active at or after `since`, oldest activity first, through all pages. */
const changedSince = async (client: Svc, since: string, kind: Execution["kind"] | undefined, signal: AbortSignal): Promise<Array<Execution>> => {
  const found: Array<Execution> = []
  let cursor: string | undefined
  do {
    const page = await client.runLists.listExecutions({ since, kind, limit: 200, ...(cursor === undefined ? {} : { cursor }) }, { signal })
    found.push(...page.executions)
    cursor = page.nextCursor ?? undefined
  } while (cursor !== undefined)
  return found.reverse()
}

/** Polls until `signal` aborts (or once): prints each execution once per status it is seen in. */
const follow = async (io: CliIo, client: Svc, options: TailOptions, signal: AbortSignal) => {
  const print = options.json
    ? (e: Execution) => io.stdout.write(`${JSON.stringify(e)}\n`)
    : (e: Execution) => io.stdout.write(`${isInteractive(io) ? coloredLine(e) : executionLine(e)}\n`)
  let watermark = new Date(options.since === undefined ? Date.now() : Date.parse(options.since)).toISOString()
  // The status each execution was last printed in, kept while it can come back at the watermark.
  const printed = new Map<string, { status: Execution["status"]; activity: string }>()
  for (;;) {
    for (const execution of await changedSince(client, watermark, options.kind, signal)) {
      if (printed.get(execution.id)?.status !== execution.status) print(execution)
      printed.set(execution.id, { status: execution.status, activity: activityOf(execution) })
      if (activityOf(execution) > watermark) watermark = activityOf(execution)
    }
    // `since` is inclusive: only executions at the watermark come back unchanged; older ones return only when they finish.
    for (const [id, seen] of printed) if (seen.activity < watermark) printed.delete(id)
    if (options.once) return
    await sleep(options.interval ?? 1000, undefined, { signal })
  }
}

const tail = async (io: CliIo, options: TailOptions) => {
  await withClient(io, options, async (client) => {
    const controller = new AbortController()
    const release = io.onStop(() => controller.abort(new Error("stopped")))
    if (isInteractive(io) && !options.once) progress(io, "Following executions as they start and finish; press Ctrl+C to stop.")
    try {
      await follow(io, client, options, controller.signal)
    } catch (error) {
      if (!controller.signal.aborted) throw error
    } finally {
      release()
    }
  })
}

/** Registers `svc runs`. */
export const runsCommands = (program: Command, io: CliIo): void => {
  const runs = program.command("runs").description("the organization's executions, through the API")
  withApi(
    runs
      .command("tail")
      .description("follow executions as they start and finish (--json: one JSON object per line)")
      .option("--since <date-time>", "start from executions active at or after this time (default: now)", parseDateTime)
      .addOption(new Option("--kind <kind>", "only executions of this kind").choices(["agent", "app", "flow", "transaction"]))
      .option("--interval <ms>", "milliseconds between polls (default: 1000)", parsePositive)
      .option("--once", "print what there is and exit"),
    "print JSON Lines on stdout: one execution object per line, each time one is seen in a new status"
  ).action((options: TailOptions) => tail(io, options))
}
