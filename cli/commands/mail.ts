/** `svc mail list`: the local email outbox (welcome emails, invites, sign-in codes), newest first. */
import type { Command } from "commander"
import type { OutboxEmail } from "../../server/provisioning/outbox/domain.js"
import { admin } from "../admin.js"
import { type DataDirOptions, parsePositive, withDataDir } from "../options.js"
import { output } from "../output.js"
import { shortTime } from "../ui/blocks.js"
import type { CliIo } from "../io.js"

interface ListOptions extends DataDirOptions {
  readonly to?: string
  readonly limit?: number
}

/** Where an email stands: sent, waiting, or failed so far. */
const deliveryOf = (email: OutboxEmail): string =>
  email.sentAt !== null ? `sent ${shortTime(email.sentAt)}` : email.lastError !== null ? `failed ×${email.attempts}: ${email.lastError}` : "recorded"

const list = async (io: CliIo, options: ListOptions) => {
  const [{ Outbox }, Effect] = await Promise.all([import("../../server/provisioning/outbox/service.js"), import("effect/Effect")])
  const emails = await admin(
    io,
    options,
    Outbox.Default,
    Effect.flatMap(Outbox, (outbox) => outbox.list({ ...(options.to === undefined ? {} : { to: options.to }), limit: options.limit ?? 100 }))
  )
  await output(io, options, emails, {
    json: (all) => ({ emails: all }),
    human: (all) => [
      { kind: "title", text: options.to === undefined ? "Outbox" : `Outbox: emails to ${options.to}`, tone: "info" },
      {
        kind: "table",
        columns: ["when", "to", "kind", "subject", "delivery"],
        rows: all.map((email) => [shortTime(email.createdAt), email.to, email.kind, email.subject, deliveryOf(email)]),
        empty: "No emails."
      },
      ...(all.length > 0 ? [{ kind: "note" as const, text: "Bodies are in --json." }] : [])
    ]
  })
}

/** Registers `svc mail`. */
export const mailCommands = (program: Command, io: CliIo): void => {
  const mail = program.command("mail").description("the local email outbox")
  withDataDir(
    mail
      .command("list")
      .description("emails the service recorded (and sent, when SVC_SMTP_URL is set), newest first")
      .option("--to <email>", "only emails to this address")
      .option("--limit <n>", "at most this many (default 100)", parsePositive)
  ).action((options: ListOptions) => list(io, options))
}
