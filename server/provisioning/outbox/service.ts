/**
 * The email outbox: every email the service would send is recorded here (`svc mail list` shows them);
 * when `SVC_SMTP_URL` is set a worker also sends them. Enqueue inside the transaction that decides the
 * email, so an email exists exactly when its cause was committed; sending happens outside it.
 */
import { Effect } from "effect"
import { AppClock, isoAt } from "../../platform/clock.js"
import { newId } from "../../platform/ids.js"
import type { OutgoingEmail } from "./domain.js"
import { OutboxRepo } from "./repo.js"

/** Records emails and lists them. */
export class Outbox extends Effect.Service<Outbox>()("svc/Outbox", {
  effect: Effect.gen(function* () {
    const repo = yield* OutboxRepo
    const clock = yield* AppClock
    return {
      /** Records one email to be sent; answers its id. */
      enqueue: (email: OutgoingEmail) =>
        Effect.gen(function* () {
          const id = newId()
          yield* repo.insert(id, email, isoAt(clock.now()))
          return id
        }),
      /** The newest emails first (at most `limit`, default 100), optionally to one recipient. */
      list: (options: { readonly to?: string; readonly limit?: number } = {}) =>
        repo.list({ ...(options.to === undefined ? {} : { to: options.to }), limit: options.limit ?? 100 })
    }
  }),
  dependencies: [OutboxRepo.Default]
}) {}
