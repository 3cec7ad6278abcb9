/**
 * Signals between instances on one PostgreSQL database (issue 24), over LISTEN/NOTIFY on a
 * dedicated connection of this instance: a cancel request for an execution another instance runs
 * (`runCancelChannel`, payload the execution id) and a conversation whose lease was given back
 * (`conversationFreedChannel`, payload the conversation id). A notification is delivered at once to
 * every listening instance; one missed while the connection is down is not replayed, so what waits
 * on one also polls (`shared-turns.ts`). The connection comes back 200 ms after it drops.
 */
import { Effect, type Scope } from "effect"
import pg from "pg"
import { conversationFreedChannel, runCancelChannel } from "./lease-repo.js"

/** What arrives on the channels this instance listens to. */
export interface RunSignalHandlers {
  readonly cancel: (executionId: string) => void
  readonly freed: (conversationId: string) => void
}

/** Listens on both channels with a connection of `pool`'s settings for the scope's life. */
export const listenForRunSignals = (pool: pg.Pool, handlers: RunSignalHandlers): Effect.Effect<void, unknown, Scope.Scope> => {
  let closed = false
  let listener: pg.Client | undefined
  const connect = async (): Promise<void> => {
    const client = new pg.Client(pool.options)
    client.on("notification", (message: { channel: string; payload?: string }) => {
      const payload = message.payload ?? ""
      if (message.channel === runCancelChannel) handlers.cancel(payload)
      else if (message.channel === conversationFreedChannel) handlers.freed(payload)
    })
    client.on("error", () => undefined)
    client.on("end", () => {
      if (!closed) setTimeout(() => void connect().catch(() => undefined), 200).unref()
    })
    await client.connect()
    await client.query(`LISTEN ${runCancelChannel}; LISTEN ${conversationFreedChannel}`)
    listener = client
  }
  return Effect.asVoid(
    Effect.acquireRelease(Effect.tryPromise(connect), () =>
      Effect.promise(async () => {
        closed = true
        await listener?.end().catch(() => undefined)
      })
    )
  )
}
