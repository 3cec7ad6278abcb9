/**
 * The Portal benchmark's webhook side: a local receiver that answers 200 at once and keeps each
 * request's raw body, headers and arrival time, and the check of what arrived: every signature
 * verified with the SDK's `verifyWebhook`, each expected end user's `end_user.signup` exactly once,
 * deliveries per second from the first enqueue to the last arrival, and the lag from the event's
 * timestamp to its arrival.
 */
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { verifyWebhook } from "../sdk/index.js"

/** One request the receiver got. */
interface Arrival {
  readonly rawBody: Buffer
  readonly headers: IncomingHttpHeaders
  /** ms since the epoch. */
  readonly at: number
}

/** A running receiver. */
export interface WebhookReceiver {
  readonly url: string
  readonly arrivals: ReadonlyArray<Arrival>
  /** Resolves with true once `n` requests in all arrived, false after `timeoutMs`. */
  readonly waitFor: (n: number, timeoutMs: number) => Promise<boolean>
  /** Takes every arrival so far, leaving the receiver empty for the next phase. */
  readonly take: () => Array<Arrival>
  readonly close: () => Promise<void>
}

/** Starts a receiver on 127.0.0.1 answering 200 to every POST as soon as its body is read. */
export const startWebhookReceiver = async (): Promise<WebhookReceiver> => {
  const arrivals: Array<Arrival> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      arrivals.push({ rawBody: Buffer.concat(chunks), headers: req.headers, at: Date.now() })
      res.writeHead(200, { "content-type": "text/plain" }).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    waitFor: async (n, timeoutMs) => {
      const deadline = Date.now() + timeoutMs
      while (arrivals.length < n) {
        if (Date.now() > deadline) return false
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return true
    },
    take: () => arrivals.splice(0),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** What the deliveries came to. */
export interface DeliveryCheck {
  readonly received: number
  readonly expected: number
  readonly verified: number
  /** Refusals of `verifyWebhook`, by reason. */
  readonly refused: Record<string, number>
  /** Expected end users with no event, and with more than one. */
  readonly missing: number
  readonly duplicated: number
  /** Events for addresses nobody expected. */
  readonly unexpected: number
  /** From the first enqueue (`webhook_deliveries.created_at`) to the last arrival. */
  readonly seconds: number
  readonly deliveriesPerSecond: number
  /** From the first arrival to the last, and the deliveries per second over that. */
  readonly arrivalSeconds: number
  readonly arrivalsPerSecond: number
  /** Event timestamp → arrival, ms. */
  readonly lagMs: Array<number>
}

/** Checks `arrivals` against the expected addresses, `firstEnqueuedAt` in ms since the epoch. */
export const checkDeliveries = (
  arrivals: ReadonlyArray<Arrival>,
  secret: string,
  expectedEmails: ReadonlyArray<string>,
  firstEnqueuedAt: number
): DeliveryCheck => {
  const counts = new Map(expectedEmails.map((email) => [email, 0]))
  const refused: Record<string, number> = {}
  const lagMs: Array<number> = []
  let verified = 0
  let unexpected = 0
  for (const arrival of arrivals) {
    const result = verifyWebhook(arrival.rawBody, arrival.headers, secret)
    if (!result.ok) {
      refused[result.reason] = (refused[result.reason] ?? 0) + 1
      continue
    }
    verified++
    const email = result.event.endUser.email
    const seen = counts.get(email)
    if (seen === undefined) unexpected++
    else counts.set(email, seen + 1)
    lagMs.push(arrival.at - Date.parse(result.event.timestamp))
  }
  const lastAt = arrivals.reduce((latest, arrival) => Math.max(latest, arrival.at), 0)
  const firstAt = arrivals.reduce((earliest, arrival) => Math.min(earliest, arrival.at), Infinity)
  const seconds = arrivals.length === 0 ? 0 : (lastAt - firstEnqueuedAt) / 1_000
  const arrivalSeconds = arrivals.length < 2 ? 0 : (lastAt - firstAt) / 1_000
  return {
    received: arrivals.length,
    expected: expectedEmails.length,
    verified,
    refused,
    missing: [...counts.values()].filter((n) => n === 0).length,
    duplicated: [...counts.values()].filter((n) => n > 1).length,
    unexpected,
    seconds,
    deliveriesPerSecond: seconds > 0 ? arrivals.length / seconds : 0,
    arrivalSeconds,
    arrivalsPerSecond: arrivalSeconds > 0 ? (arrivals.length - 1) / arrivalSeconds : 0,
    lagMs
  }
}
