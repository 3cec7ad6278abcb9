/** The local email outbox: every email the service would send (invites, sign-in codes) is a row. */
import { Schema } from "effect"

/** Kinds of email the service sends. */
export const EmailKind = Schema.Literal("end_user_welcome", "group_invite", "sign_in_code", "sign_in_refused")
export type EmailKind = typeof EmailKind.Type

/** An email to record (and send, when SMTP is configured). */
export interface OutgoingEmail {
  readonly organizationId: string | null
  readonly kind: EmailKind
  readonly to: string
  readonly subject: string
  readonly body: string
}

/** An email as the outbox keeps it. */
export const OutboxEmail = Schema.Struct({
  id: Schema.String,
  organizationId: Schema.NullOr(Schema.String),
  kind: Schema.String,
  to: Schema.String,
  subject: Schema.String,
  body: Schema.String,
  createdAt: Schema.String,
  attempts: Schema.Number,
  sentAt: Schema.NullOr(Schema.String),
  lastError: Schema.NullOr(Schema.String)
})
export type OutboxEmail = typeof OutboxEmail.Type
