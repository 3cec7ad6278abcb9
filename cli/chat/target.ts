/**
 * Who `svc chat` talks to: an Agent's published version (`POST /agents/{id}/conversation`), else,
 * when no Agent has the id, an App (`POST /apps/{id}/conversation`, called by path so the command
 * needs no generated method for it). The first turn decides; later turns keep to it.
 */
import type { ReplyStream, StreamEvent, Svc } from "../../sdk/index.js"
import { CliError } from "../errors.js"

/** A conversation turn's answer. */
export interface ChatReply {
  readonly reply: string
  readonly conversation_id: string
  readonly executionId: string
  /** An App's greeting on the turn that started the conversation (null or absent otherwise). */
  readonly greeting?: string | null
}

/** One turn: a message, the conversation it continues (if any), and the signal that stops it. */
export type SendTurn = (message: string, conversationId: string | undefined, signal: AbortSignal) => ReplyStream<ChatReply>

/** The kind of target a chat settled on. */
export type TargetKind = "agent" | "app"

const isNotFound = (error: unknown): error is Error => error instanceof Error && (error as { code?: unknown }).code === "not_found"

/** The turn of `kind` on `id`. */
const turnOf =
  (client: Svc, id: string, kind: TargetKind): SendTurn =>
  (message, conversationId, signal) => {
    const body = { message, ...(conversationId === undefined ? {} : { conversation_id: conversationId }) }
    if (kind === "agent") return client.runs.agentConversationStream(id, body, { signal })
    return client.stream<ChatReply>({ method: "POST", path: "/apps/{id}/conversation", pathParams: { id }, body, options: { signal } })
  }

/**
 * Sends turns to `id`: the Agent, or the App when the Agent endpoint answers `not_found` to the first
 * turn (before any event). When both are `not_found` the chat fails with one line giving both answers
 * (the Agent's says whether the Agent or the conversation is missing; a server without App
 * conversations answers "No such endpoint").
 */
export const chatTarget = (client: Svc, id: string) => {
  let kind: TargetKind | undefined
  return {
    kind: () => kind,
    /** Opens the stream of a turn; the first turn finds the target kind. */
    open: async function* (message: string, conversationId: string | undefined, signal: AbortSignal): AsyncGenerator<StreamEvent<ChatReply>> {
      if (kind !== undefined) return yield* turnOf(client, id, kind)(message, conversationId, signal)
      const agentTurn = turnOf(client, id, "agent")(message, conversationId, signal)[Symbol.asyncIterator]()
      let first: IteratorResult<StreamEvent<ChatReply>>
      try {
        first = await agentTurn.next()
      } catch (error) {
        if (!isNotFound(error)) throw error
        try {
          const appEvents = turnOf(client, id, "app")(message, conversationId, signal)[Symbol.asyncIterator]()
          const appFirst = await appEvents.next()
          kind = "app"
          if (appFirst.done) return
          yield appFirst.value
          for (let next = await appEvents.next(); !next.done; next = await appEvents.next()) yield next.value
          return
        } catch (appError) {
          if (!isNotFound(appError)) throw appError
          const message = `${error.message} Nor is '${id}' an App this server can talk to: ${appError.message}`
          throw new CliError(message, 1, "not_found", `not_found: ${message}`)
        }
      }
      kind = "agent"
      if (first.done) return
      yield first.value
      for (let next = await agentTurn.next(); !next.done; next = await agentTurn.next()) yield next.value
    }
  }
}
