/** SQL of the email outbox. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { statementsOn, type TxBody, txAll, txRun } from "../../platform/sql/write-fast-path.js"
import type { OutboxEmail, OutgoingEmail } from "./domain.js"
import { declareWrites, writing } from "../../platform/sql/write-declaration.js"

/** What each write statement of this module writes (`write-declaration.ts`). */
const outboxEmailsWrites = declareWrites("outbox_emails")

interface OutboxRow {
  readonly id: string
  readonly organization_id: string | null
  readonly kind: string
  readonly recipient: string
  readonly subject: string
  readonly body: string
  readonly created_at: string
  readonly attempts: number
  readonly sent_at: string | null
  readonly last_error: string | null
}

const toEmail = (row: OutboxRow): OutboxEmail => ({
  id: row.id,
  organizationId: row.organization_id,
  kind: row.kind,
  to: row.recipient,
  subject: row.subject,
  body: row.body,
  createdAt: row.created_at,
  attempts: row.attempts,
  sentAt: row.sent_at,
  lastError: row.last_error
})

/** Records one email to be sent, as a transaction body step (`WriteTransactions`). */
export function* insertOutboxEmailTx(id: string, email: OutgoingEmail, at: string): TxBody<void> {
  yield* txRun("INSERT INTO outbox_emails (id, organization_id, kind, recipient, subject, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", [
    id,
    email.organizationId,
    email.kind,
    email.to,
    email.subject,
    email.body,
    at
  ], outboxEmailsWrites)
}

/** Rows of `outbox_emails`. */
/** How many emails of `kind` went to `recipient` after `since` (ISO time; a transaction body step). */
export function* emailsSinceTx(recipient: string, kind: OutgoingEmail["kind"], since: string): TxBody<number> {
  const rows = yield* txAll<{ n: number }>("SELECT count(*) AS n FROM outbox_emails WHERE recipient = ? AND kind = ? AND created_at > ?", [recipient, kind, since])
  return Number(rows[0]?.n ?? 0)
}

export class OutboxRepo extends Effect.Service<OutboxRepo>()("svc/OutboxRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const statements = statementsOn(sql)
    return {
      /** Records one email (inside the caller's transaction when there is one). */
      insert: (id: string, email: OutgoingEmail, at: string) => statements(insertOutboxEmailTx(id, email, at)),
      /** The newest emails first, optionally to one recipient (compared case-insensitively). */
      list: (options: { readonly to?: string; readonly limit: number }) =>
        Effect.orDie(
          options.to === undefined
            ? sql<OutboxRow>`SELECT * FROM outbox_emails ORDER BY created_at DESC, id DESC LIMIT ${options.limit}`
            : sql<OutboxRow>`SELECT * FROM outbox_emails WHERE lower(recipient) = ${options.to.toLowerCase()}
                ORDER BY created_at DESC, id DESC LIMIT ${options.limit}`
        ).pipe(Effect.map((rows) => rows.map(toEmail))),
      /** Emails not yet sent, oldest first, with fewer than `maxAttempts` attempts. */
      unsent: (maxAttempts: number, limit: number) =>
        Effect.orDie(sql<OutboxRow>`SELECT * FROM outbox_emails WHERE sent_at IS NULL AND attempts < ${maxAttempts}
          ORDER BY created_at, id LIMIT ${limit}`).pipe(Effect.map((rows) => rows.map(toEmail))),
      /**
       * Claims attempt `attempts + 1` of an unsent email before it is sent, until `until` (an ISO
       * time): true for exactly one caller however many processes (instances on one PostgreSQL
       * database) saw the same row, and never while another's claim runs, so an email is never sent
       * twice by one attempt. A claimed attempt counts even if its process stops before sending; the
       * next may be taken once the claim has passed and it is due.
       */
      claimAttempt: (id: string, attempts: number, at: string, until: string) =>
        Effect.orDie(sql<{ id: string }>`UPDATE outbox_emails SET attempts = attempts + 1, claimed_until = ${until}
          WHERE id = ${id} AND attempts = ${attempts} AND sent_at IS NULL AND (claimed_until IS NULL OR claimed_until < ${at})
          RETURNING id`.pipe(writing(outboxEmailsWrites))).pipe(Effect.map((rows) => rows.length === 1)),
      /** Records the outcome of the claimed attempt. */
      recordOutcome: (id: string, outcome: { readonly sentAt: string | null; readonly error: string | null }) =>
        Effect.orDie(sql`UPDATE outbox_emails SET sent_at = ${outcome.sentAt}, last_error = ${outcome.error}, claimed_until = NULL WHERE id = ${id}`.pipe(writing(outboxEmailsWrites)))
    }
  }),
  accessors: true
}) {}
