/**
 * `svc listen --forward-to URL`: like the Stripe CLI's listener, for local development. It watches
 * the data directory's webhook outbox and forwards every event recorded from now on (of `--org`,
 * or of every organization), signed afresh with its Portal's secret so the receiver verifies it as
 * it would the real delivery, printing one line per event (JSON Lines with `--json`). It does not
 * change deliveries to the configured endpoints. Stops on SIGINT or SIGTERM.
 */
import type { Command } from "commander"
import type { CliIo } from "../io.js"
import { admin } from "../admin.js"
import { type DataDirOptions, parsePositive, resolveDataDir } from "../options.js"

interface ListenOptions extends DataDirOptions {
  readonly forwardTo: string
  readonly org?: string
  readonly interval?: number
  readonly json?: boolean
}

/** One forwarded event, as `--json` prints it. */
interface Forwarded {
  readonly deliveryId: string
  readonly portalId: string
  readonly event: string
  readonly test: boolean
  readonly email: string | null
  readonly forwardedTo: string
  readonly statusCode: number | null
  readonly error: string | null
  readonly durationMs: number
}

const emailOf = (body: string): string | null => {
  try {
    return (JSON.parse(body) as { endUser?: { email?: string } }).endUser?.email ?? null
  } catch {
    return null
  }
}

const line = (f: Forwarded): string =>
  `${new Date().toISOString()}  ${f.event}${f.test ? " (test)" : ""}  ${f.email ?? "?"}  -> ${
    f.error === null ? `${f.statusCode} in ${f.durationMs} ms` : `failed: ${f.error}`
  }\n`

const listen = async (io: CliIo, options: ListenOptions) => {
  const [{ WebhookService }, { WebhookSettings }, { AccountsService }, { sendSigned }, Deferred, Duration, Effect, Layer] = await Promise.all([
    import("../../server/webhooks/service.js"),
    import("../../server/webhooks/domain.js"),
    import("../../server/identity/service.js"),
    import("../../server/webhooks/delivery.js"),
    import("effect/Deferred"),
    import("effect/Duration"),
    import("effect/Effect"),
    import("effect/Layer")
  ])
  const stopped = Effect.runSync(Deferred.make<void>())
  const release = io.onStop(() => Effect.runSync(Deferred.succeed(stopped, undefined)))
  try {
    await admin(
      io,
      options,
      Layer.merge(AccountsService.Default, Layer.provide(WebhookService.Default, WebhookSettings.layer())),
      Effect.gen(function* () {
        const webhooks = yield* WebhookService
        const organizationId = options.org === undefined ? null : (yield* (yield* AccountsService).organization(options.org)).id
        let cursor = yield* webhooks.listenStart(organizationId)
        io.stderr.write(
          `Forwarding webhook events of ${options.org ?? "every organization"} in ${resolveDataDir(io, options.dataDir)} to ${options.forwardTo} (Ctrl-C stops)\n`
        )
        const pass = Effect.gen(function* () {
          for (const event of yield* webhooks.eventsAfter(cursor, organizationId)) {
            cursor = event.cursor
            const outcome =
              event.secret === null
                ? { statusCode: null, error: "the Portal has no signing secret", durationMs: 0 }
                : yield* sendSigned({ url: options.forwardTo, secret: event.secret, body: event.body, test: event.test, allowPrivate: true, timeoutMs: 10_000 })
            const forwarded: Forwarded = {
              deliveryId: event.deliveryId,
              portalId: event.portalId,
              event: event.event,
              test: event.test,
              email: emailOf(event.body),
              forwardedTo: options.forwardTo,
              statusCode: outcome.statusCode,
              error: outcome.error,
              durationMs: outcome.durationMs
            }
            io.stdout.write(options.json ? `${JSON.stringify(forwarded)}\n` : line(forwarded))
          }
        })
        yield* Effect.forever(Effect.zipRight(pass, Effect.sleep(Duration.millis(options.interval ?? 250)))).pipe(
          Effect.raceFirst(Deferred.await(stopped))
        )
      })
    )
  } finally {
    release()
  }
}

/** Registers `svc listen`. */
export const listenCommand = (program: Command, io: CliIo): void => {
  program
    .command("listen")
    .description("forward this server's webhook events (from now on) to a local URL, printing each")
    .requiredOption("--forward-to <url>", "where to POST each event (signed with its Portal's secret)")
    .option("--org <slug>", "only this organization's events (default: every organization)")
    .option("--interval <ms>", "how often to look for new events, in milliseconds (default 250)", parsePositive)
    .option("--data-dir <dir>", "data directory (default: $SVC_DATA_DIR or ./.svc)")
    .option("--json", "print JSON Lines: one forwarded event a line")
    .action((options: ListenOptions) => listen(io, options))
}
