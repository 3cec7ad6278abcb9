/**
 * `svc conversations list|export`: the organization's conversations through the API. `list` prints
 * one page (newest activity first; `--cursor` for the next), as a table for people or with `--json`
 * the API's `{conversations, nextCursor}`; `export ID` writes a conversation's JSON Lines to stdout
 * or to `--output FILE`. The API key decides the organization (docs/decisions.md, "Runs to follow").
 */
import { type Command, InvalidArgumentError, Option } from "commander"
import { writeFileSync } from "node:fs"
import { resolve } from "node:path"
import type { RunListsListConversationsItem, RunListsListConversationsResponse } from "../../sdk/index.js"
import { type ApiOptions, withApi, withClient } from "../api.js"
import { failure } from "../errors.js"
import type { CliIo } from "../io.js"
import { output, progress } from "../output.js"
import { shortTime } from "../ui/blocks.js"

interface ListOptions extends ApiOptions {
  readonly targetKind?: "agent" | "app" | "flow"
  readonly targetId?: string
  readonly endUser?: string
  readonly since?: string
  readonly limit?: number
  readonly cursor?: string
}

interface ExportOptions extends ApiOptions {
  readonly output?: string
}

/** Parses a date-time option (commander `argParser`). */
export const parseDateTime = (value: string): string => {
  if (Number.isNaN(Date.parse(value))) throw new InvalidArgumentError("Expected a date-time, like 2026-11-21T12:00:00Z.")
  return value
}

/** Parses a page size, 1 to 200 (commander `argParser`). */
export const parsePageSize = (value: string): number => {
  const number = Number(value)
  if (value.trim() === "" || !Number.isInteger(number) || number < 1 || number > 200) throw new InvalidArgumentError("Expected a whole number from 1 to 200.")
  return number
}

/** Who started a conversation, for people: `end user <id>`, `member <id>`, `key <id>`, `unrecorded`. */
export const starterText = (startedBy: RunListsListConversationsItem["startedBy"]): string => {
  if (startedBy.type === "end_user") return `end user ${startedBy.endUserId}`
  if (startedBy.type === "member") return `member ${startedBy.memberId}`
  if (startedBy.type === "api_key") return `key ${startedBy.apiKeyId}`
  return "unrecorded"
}

const list = async (io: CliIo, options: ListOptions) => {
  const page = await withClient(io, options, (client) =>
    client.runLists.listConversations({
      targetKind: options.targetKind,
      targetId: options.targetId,
      endUserId: options.endUser,
      since: options.since,
      limit: options.limit,
      cursor: options.cursor
    })
  )
  await output<RunListsListConversationsResponse>(io, options, page, {
    json: (p) => p,
    human: (p) => [
      { kind: "title", tone: "info", text: `${p.conversations.length} ${p.conversations.length === 1 ? "conversation" : "conversations"}, newest activity first` },
      {
        kind: "table",
        columns: ["id", "target", "started by", "turns", "last activity", "created"],
        rows: p.conversations.map((c) => [c.id, `${c.targetKind} ${c.targetId}`, starterText(c.startedBy), String(c.turnCount), shortTime(c.lastActivityAt), shortTime(c.createdAt)]),
        empty: "No conversations."
      },
      ...(p.nextCursor === null ? [] : [{ kind: "note" as const, text: `More: --cursor ${p.nextCursor}` }])
    ]
  })
}

const exportConversation = async (io: CliIo, id: string, options: ExportOptions) => {
  const bytes = await withClient(io, options, (client) => client.runLists.exportConversation(id))
  const data = bytes instanceof Uint8Array ? bytes : new TextEncoder().encode(String(bytes))
  const lines = data.reduce((count, byte) => (byte === 10 ? count + 1 : count), 0)
  if (options.output === undefined) {
    io.stdout.write(new TextDecoder().decode(data))
    return
  }
  const file = resolve(io.cwd, options.output)
  try {
    writeFileSync(file, data)
  } catch (error) {
    throw failure(`cannot write ${file}: ${(error as Error).message}`, "cannot_write")
  }
  if (options.json) io.stdout.write(`${JSON.stringify({ file, lines, bytes: data.length })}\n`)
  else progress(io, `Exported ${lines} ${lines === 1 ? "line" : "lines"} of conversation ${id} to ${file}`)
}

/** Registers `svc conversations`. */
export const conversationsCommands = (program: Command, io: CliIo): void => {
  const conversations = program.command("conversations").description("the organization's conversations, through the API")
  withApi(
    conversations
      .command("list")
      .description("list conversations, newest activity first (one page; --cursor for the next)")
      .addOption(new Option("--target-kind <kind>", "only conversations with an agent, app or flow").choices(["agent", "app", "flow"]))
      .option("--target-id <id>", "only conversations with this Agent, App or Flow")
      .option("--end-user <id>", "only conversations this end user holds at a Portal")
      .option("--since <date-time>", "only conversations active at or after this time", parseDateTime)
      .option("--limit <n>", "conversations per page, 1 to 200 (default: 50)", parsePageSize)
      .option("--cursor <cursor>", "the page after the one that printed this cursor"),
    "print the API's answer, {conversations, nextCursor}, as one JSON document"
  ).action((options: ListOptions) => list(io, options))
  withApi(
    conversations
      .command("export")
      .description("write a conversation as JSON Lines: its messages in order, each execution before its messages")
      .argument("<conversation-id>", "the conversation")
      .option("--output <file>", "write to this file instead of stdout"),
    "with --output, print {file, lines, bytes} as one JSON document"
  ).action((id: string, options: ExportOptions) => exportConversation(io, id, options))
}
