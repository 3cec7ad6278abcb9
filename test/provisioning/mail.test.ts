/**
 * The outbox and mail: `sendEmail` records a welcome email; `svc mail list` shows the outbox newest
 * first; with `SVC_SMTP_URL` set the server's worker sends unsent emails to a fake SMTP server on a
 * real socket (authenticating with the URL's credentials), recording each attempt and its error.
 */
import { Duration, Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { deliverPending, type MailDeliverySettings } from "../../server/provisioning/outbox/delivery.js"
import { OutboxRepo } from "../../server/provisioning/outbox/repo.js"
import { sql } from "../support/fixtures.js"
import { startFakeSmtp, type FakeSmtp } from "../support/fake-smtp.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { svc, svcJson } from "../cli/helpers.js"

let smtp: FakeSmtp
let server: TestServer

beforeAll(async () => {
  smtp = await startFakeSmtp()
  process.env.SVC_SMTP_URL = `smtp://mailer:s3cret@127.0.0.1:${smtp.port}`
  process.env.SVC_SMTP_FROM = "Acme <no-reply@acme.test>"
  server = await startTestServer()
  delete process.env.SVC_SMTP_URL
  delete process.env.SVC_SMTP_FROM
})
afterAll(async () => {
  await server.stop()
  await smtp.close()
})

const until = async <A>(probe: () => Promise<A | undefined>, what: string): Promise<A> => {
  const deadline = Date.now() + 10_000
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const outboxRow = (to: string) =>
  sql(server, (db) => db<{ attempts: number; sent_at: string | null; last_error: string | null }>`SELECT attempts, sent_at, last_error FROM outbox_emails WHERE recipient = ${to}`).then(
    (rows) => rows[0]
  )

describe("SMTP delivery", () => {
  it("sends a recorded welcome email over SMTP with the URL's credentials and marks it sent", async () => {
    const response = await server.request("POST", "/end-users", { body: { email: "ada@example.com", fullName: "Ada", sendEmail: true } })
    expect(response.status).toBe(201)
    const mail = await until(async () => smtp.received.find((m) => m.to.includes("ada@example.com")), "the email")
    expect(mail.from).toBe("no-reply@acme.test")
    expect(mail.auth).toBe("mailer:s3cret")
    expect(mail.data).toMatch(/Subject: Your .* account/)
    expect(mail.data).toContain("Hello Ada,")
    const row = await until(async () => {
      const found = await outboxRow("ada@example.com")
      return found?.sent_at ? found : undefined
    }, "the sent mark")
    expect(row).toEqual({ attempts: 1, sent_at: expect.any(String), last_error: null })
  })

  it("records a refused delivery's attempts and error, retries 10 s, 1 min, 5 min and 30 min apart, five attempts in all", async () => {
    server.clock.advance(1_000)
    await server.request("POST", "/end-users", { body: { email: "bounce@example.com", sendEmail: true } })
    const attempts = (n: number) =>
      until(async () => {
        const found = await outboxRow("bounce@example.com")
        return found && found.attempts >= n && found.last_error !== null ? found : undefined
      }, `${n} attempts`)
    const first = await attempts(1)
    expect(first.sent_at).toBeNull()
    expect(first.last_error).toMatch(/550/)
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect((await outboxRow("bounce@example.com"))!.attempts).toBe(1)
    for (const [n, delay] of [[2, 10_000], [3, 60_000], [4, 300_000], [5, 1_800_000]] as const) {
      server.clock.advance(delay)
      expect((await attempts(n)).attempts).toBe(n)
    }
    server.clock.advance(24 * 3600_000)
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(await outboxRow("bounce@example.com")).toEqual({ attempts: 5, sent_at: null, last_error: expect.stringMatching(/550/) })
    expect(smtp.received.some((m) => m.to.includes("bounce@example.com"))).toBe(false)
  })
})

describe("two delivery rounds at once (two instances on one database)", () => {
  it("send each email once: every attempt is claimed before it is sent", async () => {
    const quiet = await startTestServer()
    try {
      for (const name of ["one", "two", "three"]) {
        expect((await quiet.request("POST", "/end-users", { body: { email: `${name}@claims.test`, sendEmail: true } })).status).toBe(201)
      }
      const sent: Array<string> = []
      const settings: MailDeliverySettings = { smtpUrl: "smtp://unused", from: "svc <a@b.c>", pollInterval: Duration.seconds(1), retryDelaysMs: [10_000] }
      const send = async (email: { readonly to: string }) => {
        await new Promise((resolve) => setTimeout(resolve, 20))
        sent.push(email.to)
      }
      const round = deliverPending(settings, send).pipe(Effect.provide(Layer.fresh(OutboxRepo.Default)))
      const counts = await quiet.admin(Effect.all([round, round], { concurrency: 2 }))
      const rows = await sql(quiet, (db) => db<{ recipient: string; attempts: number; sent: number }>`SELECT recipient, attempts, CASE WHEN sent_at IS NULL THEN 0 ELSE 1 END AS sent FROM outbox_emails ORDER BY recipient, id`)
      expect(rows.length).toBeGreaterThanOrEqual(3)
      expect(counts[0] + counts[1]).toBe(rows.length)
      expect(sent.sort()).toEqual(rows.map((row) => row.recipient).sort())
      expect(rows.every((row) => row.attempts === 1 && row.sent === 1)).toBe(true)
    } finally {
      await quiet.stop()
    }
  })
})

describe("svc mail list", () => {
  it("lists the outbox newest first, filtered by recipient (case-insensitively), as JSON or a table", async () => {
    server.clock.advance(60_000)
    await server.request("POST", "/end-users", { body: { email: "zed@example.com", sendEmail: true } })
    const all = await svcJson(["mail", "list", "--json"], server.dataDir)
    expect(all.emails.map((e: { to: string }) => e.to)).toEqual(["zed@example.com", "bounce@example.com", "ada@example.com"])
    const ada = await svcJson(["mail", "list", "--to", "ADA@example.com", "--json"], server.dataDir)
    expect(ada.emails).toEqual([
      {
        id: expect.any(String),
        organizationId: expect.any(String),
        kind: "end_user_welcome",
        to: "ada@example.com",
        subject: expect.stringContaining("account"),
        body: expect.stringContaining("Hello Ada,"),
        createdAt: expect.any(String),
        attempts: 1,
        sentAt: expect.any(String),
        lastError: null
      }
    ])
    const human = await svc(["mail", "list", "--limit", "2"], server.dataDir)
    expect(human.code).toBe(0)
    expect(human.stdout).toContain("zed@example.com")
    expect(human.stdout).toContain("end_user_welcome")
    expect(human.stdout).not.toContain("ada@example.com")
    const none = await svc(["mail", "list", "--to", "nobody@example.com"], server.dataDir)
    expect(none.stdout).toContain("No emails.")
  })

  it("without SVC_SMTP_URL the outbox only records: nothing is attempted", async () => {
    const quiet = await startTestServer()
    try {
      await quiet.request("POST", "/end-users", { body: { email: "kept@example.com", sendEmail: true } })
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      const rows = await sql(quiet, (db) => db<{ attempts: number; sent_at: string | null }>`SELECT attempts, sent_at FROM outbox_emails`)
      expect(rows).toEqual([{ attempts: 0, sent_at: null }])
    } finally {
      await quiet.stop()
    }
  })
})
