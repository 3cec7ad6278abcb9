/**
 * Stopping a loaded server without failing what it was asked (issue 24): the requests in flight are
 * tracked (every request a Node server emits, whoever answers it: a front branch or the API), and
 * `drain` lets every request already received finish, answers every request from then on with
 * `Connection: close`, stops accepting connections once no request has been in flight, nor a
 * connection accepted in the last second waited for its first request, for two looks in a row
 * (20 ms apart), and resolves then, or after `boundMs` at the most. The listening
 * socket stays open until then because closing it resets the connections the kernel already took
 * but the process had not yet accepted: under load, requests queued as surely as those waiting for
 * the pool. A balancer that keeps sending new requests keeps a draining instance serving until the
 * bound; one that stops (a failed health check, an instance taken out) lets it stop at once. Only then does the server's scope close its database pool,
 * so a request waiting for a connection of the pool is answered, never failed by a pool that ended.
 * An event stream already started (an MCP stream, a followed run) is not waited for: the scope's
 * close ends it (and the run service drains runs of its own).
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { Socket } from "node:net"

/** The longest a closing server waits for its requests in flight (milliseconds). */
export const drainBoundMs = 30_000

/** How often a draining server looks whether requests are left. */
const drainCheckMs = 20

/**
 * How long a connection accepted with no request read yet is waited for: under load a request's
 * bytes are read a moment after its connection was accepted, and `closeIdleConnections` would
 * reset it meanwhile. A client that connects and sends nothing is let go after this.
 */
const freshConnectionMs = 1_000

/** The requests of a server in flight and how to wait them out. */
export interface Drainable {
  /** Requests received and not yet answered (or given up by their client), event streams included. */
  readonly inFlight: () => number
  /** Waits until no request but event streams has been in flight for two looks (or `boundMs` passed), then stops accepting connections and closes the idle ones. */
  readonly drain: (boundMs?: number) => Promise<void>
}

/** Whether a response is an event stream already under way. */
const isEventStream = (response: ServerResponse) => response.headersSent && String(response.getHeader("content-type") ?? "").startsWith("text/event-stream")

/** Tracks `server`'s requests from now on; install it after anything else that wraps the server's `emit`, so it sees every request first. */
export const drainable = (server: Server): Drainable => {
  const responses = new Set<ServerResponse>()
  /** Connections accepted whose first request was not read yet, with when they were accepted. */
  const fresh = new Map<Socket, number>()
  let draining = false
  const emit = server.emit.bind(server) as (event: string | symbol, ...args: Array<unknown>) => boolean
  server.emit = ((event: string | symbol, ...args: Array<unknown>): boolean => {
    if (event === "connection") {
      const socket = args[0] as Socket
      fresh.set(socket, Date.now())
      socket.once("close", () => fresh.delete(socket))
    }
    if (event === "request") {
      fresh.delete((args[0] as IncomingMessage).socket)
      const response = args[1] as ServerResponse
      responses.add(response)
      if (draining) response.shouldKeepAlive = false
      response.once("close", () => responses.delete(response))
    }
    return emit(event, ...args)
  }) as Server["emit"]
  const waitedFor = () => {
    for (const response of responses) if (!isEventStream(response)) return true
    const now = Date.now()
    for (const accepted of fresh.values()) if (now - accepted < freshConnectionMs) return true
    return false
  }
  return {
    inFlight: () => responses.size,
    drain: (boundMs = drainBoundMs) =>
      new Promise<void>((resolve) => {
        draining = true
        for (const response of responses) if (!response.headersSent) response.shouldKeepAlive = false
        const started = Date.now()
        let quiet = 0
        // Polled rather than woken by each answer: a connection queued in the kernel is accepted and read a moment later.
        const check = () => {
          quiet = waitedFor() ? 0 : quiet + 1
          if (quiet < 2 && Date.now() - started < boundMs) return void setTimeout(check, drainCheckMs)
          if (server.listening) server.close()
          server.closeIdleConnections()
          resolve()
        }
        check()
      })
  }
}
