/**
 * `svc chat AGENT_OR_APP_ID`: talks to an Agent (or an App) through the API as end-users do, the
 * reply streamed as it arrives. With `--message` one turn; without it, lines typed on a terminal (an
 * ink chat) or read from stdin, each a turn of the same conversation. `--json` prints JSON Lines.
 */
import type { Command } from "commander"
import { createInterface } from "node:readline"
import type { Svc } from "../../sdk/index.js"
import { type ApiOptions, withApi, withClient } from "../api.js"
import { type ChatReply, chatTarget } from "../chat/target.js"
import type { ChatView } from "../chat/view.js"
import type { CliIo } from "../io.js"
import { isInteractive } from "../output.js"

interface ChatOptions extends ApiOptions {
  readonly message?: string | undefined
  readonly conversation?: string | undefined
}


/**
 * JSON Lines: one event a line (`{"type":"delta","text":…}`, … `{"type":"done","answer":{…}}`), a
 * failure as `{"type":"error","error":{code,message}}`. The events' ids (what the SDK resumes a cut
 * stream with) are left out: the lines stay as they were before streams resumed.
 */
export const jsonLinesView = (io: CliIo): ChatView => ({
  event: ({ id: _id, ...event }) => io.stdout.write(`${JSON.stringify(event)}\n`),
  failed: (error) => {
    const { code, message } = error as { code?: unknown; message?: unknown }
    io.stdout.write(`${JSON.stringify({ type: "error", error: { code: typeof code === "string" ? code : "command_failed", message: String(message) } })}\n`)
  }
})

/**
 * Plain text: the reply streamed to stdout as it arrives, a newline after it; tools, an App's
 * greeting (it arrives with the answer) and the conversation id on stderr.
 */
export const plainView = (io: CliIo): ChatView => {
  let shownConversation: string | undefined
  let open = false
  return {
    event: (event) => {
      if (event.type === "delta") {
        open = true
        io.stdout.write(event.text)
      } else if (event.type === "tool") io.stderr.write(`(using ${event.name})\n`)
      else if (event.type === "done") {
        io.stdout.write("\n")
        open = false
        if (typeof event.answer.greeting === "string") io.stderr.write(`greeting: ${event.answer.greeting}\n`)
        if (event.answer.conversation_id !== shownConversation) {
          shownConversation = event.answer.conversation_id
          io.stderr.write(`conversation ${shownConversation} (continue it with --conversation ${shownConversation})\n`)
        }
      }
    },
    failed: () => {
      if (open) io.stdout.write("\n")
      open = false
    }
  }
}

/** A chat session: sends turns in order on one conversation, each stoppable by the user. */
export const chatSession = (client: Svc, io: CliIo, id: string, conversationId: string | undefined) => {
  const target = chatTarget(client, id)
  let conversation = conversationId
  return {
    conversation: () => conversation,
    /** Sends one message, handing its events to `view`; resolves with the answer. */
    send: async (message: string, view: ChatView): Promise<ChatReply> => {
      const controller = new AbortController()
      const stopListening = io.onStop(() => controller.abort(new Error("stopped")))
      try {
        for await (const event of target.open(message, conversation, controller.signal)) {
          view.event(event)
          if (event.type === "done") {
            conversation = event.answer.conversation_id
            return event.answer
          }
        }
        throw new Error("the stream ended without an answer")
      } catch (error) {
        view.failed(error)
        throw error
      } finally {
        stopListening()
      }
    }
  }
}

/** Lines of stdin, each a message (blank lines skipped). */
const stdinLines = async function* (io: CliIo): AsyncGenerator<string> {
  const lines = createInterface({ input: io.stdin, crlfDelay: Infinity })
  for await (const line of lines) if (line.trim() !== "") yield line
}

const chat = async (io: CliIo, id: string, options: ChatOptions) =>
  withClient(io, options, async (client) => {
    const session = chatSession(client, io, id, options.conversation)
    if (!options.json && isInteractive(io)) {
      const { runInkChat } = await import("../ui/chat.js")
      await runInkChat(io, session, options.message)
      return
    }
    const view = options.json ? jsonLinesView(io) : plainView(io)
    if (options.message !== undefined) {
      await session.send(options.message, view)
      return
    }
    for await (const line of stdinLines(io)) await session.send(line, view)
  })

/** Registers `svc chat`. */
export const chatCommand = (program: Command, io: CliIo): void => {
  withApi(
    program
      .command("chat")
      .description("talk to an Agent (or an App) through the API, replies streamed as they arrive")
      .argument("<agent-or-app-id>", "the Agent, or the App, to talk to")
      .option("--message <text>", "send this one message and exit (default: read messages: typed on a terminal, else stdin lines)")
      .option("--conversation <id>", "continue this conversation"),
    "print JSON Lines: one event a line (start, delta, tool, done; a failure as an error line)"
  ).action((id: string, options: ChatOptions) => chat(io, id, options))
}
