/** The service's clock: injectable so rate limits and expiries can be tested without sleeping. */
import { Context, Layer } from "effect"

/** Milliseconds since the epoch, from the system or a test's hand. */
export class AppClock extends Context.Tag("svc/AppClock")<AppClock, { readonly now: () => number }>() {
  /** The system clock. */
  static readonly system = Layer.succeed(AppClock, { now: () => Date.now() })
  /** A clock driven by `now`. */
  static readonly from = (now: () => number) => Layer.succeed(AppClock, { now })
}

let lastMs = Number.NaN
let lastIso = ""

/** ISO 8601 timestamp for milliseconds since the epoch (the last one is kept: many requests share a millisecond). */
export const isoAt = (ms: number): string => {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString()
    lastMs = ms
  }
  return lastIso
}
