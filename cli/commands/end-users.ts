/** `svc end-users add|list|get|revoke`: end-user accounts through the API (the SDK). */
import type { Command } from "commander"
import type { EndUsersGetResponse, EndUsersListResponse, EndUsersProvisionResponse } from "../../sdk/index.js"
import { type ApiOptions, withApi, withClient } from "../api.js"
import { parsePositive } from "../options.js"
import { output } from "../output.js"
import { type Block, shortTime } from "../ui/blocks.js"
import type { CliIo } from "../io.js"

type Subscription = EndUsersProvisionResponse["subscriptions"][number]

interface AddOptions extends ApiOptions {
  readonly email: string
  readonly name?: string
  readonly plan: Array<string>
  readonly group: Array<string>
  readonly sendEmail?: boolean
}

interface ListOptions extends ApiOptions {
  readonly email?: string
  readonly limit?: number
  readonly cursor?: string
}

/** Collects a repeatable option's values. */
const collect = (value: string, previous: Array<string>): Array<string> => [...previous, value]

const credits = (n: number) => n.toLocaleString("en-US")

/** Subscriptions as a table, for people. */
const subscriptionTable = (subscriptions: ReadonlyArray<Subscription>): Block => ({
  kind: "table",
  columns: ["plan", "status", "credits left", "used / allowance", "bonus", "resets", "subscription"],
  rows: subscriptions.map((s) => [
    s.tierPlanName,
    s.status,
    credits(s.creditsRemaining),
    `${credits(s.creditsUsed)} / ${credits(s.creditAllowance)}`,
    credits(s.bonusCredits),
    shortTime(s.creditsResetAt),
    s.id
  ]),
  empty: "No plans."
})

const add = async (io: CliIo, options: AddOptions) => {
  const result = await withClient(io, options, (client) =>
    client.endUsers.provision({
      email: options.email,
      ...(options.name === undefined ? {} : { fullName: options.name }),
      ...(options.plan.length === 0 ? {} : { tierPlanIds: options.plan }),
      ...(options.group.length === 0 ? {} : { groupIds: options.group }),
      ...(options.sendEmail ? { sendEmail: true } : {})
    })
  )
  await output(io, options, result, {
    json: (r) => r,
    human: (r) => [
      { kind: "title", text: `${r.created ? "Created" : "Updated"} end user ${r.endUser.email}` },
      {
        kind: "fields",
        rows: [
          ["id", r.endUser.id],
          ["email", r.endUser.email],
          ["name", r.endUser.fullName ?? "(none)"],
          ["created", shortTime(r.endUser.createdAt)],
          ["groups joined", r.groupsJoined.length === 0 ? "none" : r.groupsJoined.join(", ")]
        ]
      },
      subscriptionTable(r.subscriptions),
      ...(options.sendEmail ? [{ kind: "note" as const, text: "A welcome email was recorded in the outbox (svc mail list)." }] : [])
    ]
  })
}

const list = async (io: CliIo, options: ListOptions) => {
  const page: EndUsersListResponse = await withClient(io, options, (client) =>
    client.endUsers.list({
      ...(options.email === undefined ? {} : { email: options.email }),
      ...(options.limit === undefined ? {} : { limit: options.limit }),
      ...(options.cursor === undefined ? {} : { cursor: options.cursor })
    })
  )
  await output(io, options, page, {
    json: (p) => p,
    human: (p) => [
      {
        kind: "table",
        columns: ["id", "email", "name", "state", "created"],
        rows: p.endUsers.map((u) => [u.id, u.email, u.fullName ?? "", u.state, shortTime(u.createdAt)]),
        empty: options.email === undefined ? "No end users." : `No end user with the email ${options.email}.`
      },
      ...(p.nextCursor === null ? [] : [{ kind: "note" as const, text: `More: --cursor ${p.nextCursor}` }])
    ]
  })
}

const get = async (io: CliIo, id: string, options: ApiOptions) => {
  const read: EndUsersGetResponse = await withClient(io, options, (client) => client.endUsers.get(id))
  await output(io, options, read, {
    json: (r) => r,
    human: ({ endUser: u }) => [
      { kind: "title", text: `End user ${u.email}`, tone: u.state === "active" ? "success" : "warning" },
      {
        kind: "fields",
        rows: [
          ["id", u.id],
          ["email", u.email],
          ["name", u.fullName ?? "(none)"],
          ["state", u.state],
          ["created", shortTime(u.createdAt)],
          ["updated", shortTime(u.updatedAt)],
          ["groups", u.groupIds.length === 0 ? "none" : u.groupIds.join(", ")],
          ...(u.grantIds.length === 0 ? [] : [["per-user grants", u.grantIds.join(", ")] as const])
        ]
      },
      subscriptionTable(u.subscriptions)
    ]
  })
}

const revoke = async (io: CliIo, id: string, options: ApiOptions) => {
  const result = await withClient(io, options, (client) => client.endUsers.revoke(id))
  await output(io, options, result, {
    json: (r) => r,
    human: () => [
      { kind: "title", text: `Revoked end user ${id}`, tone: "warning" },
      { kind: "note", text: "Plans, groups and credits stay; svc end-users add with the same email restores access." }
    ]
  })
}

/** Registers `svc end-users`. */
export const endUsersCommands = (program: Command, io: CliIo): void => {
  const endUsers = program.command("end-users").description("end-user accounts, through the API")
  withApi(
    endUsers
      .command("add")
      .description("create an end user, or update the one with this email (plans and groups are added)")
      .requiredOption("--email <email>", "the account's email address")
      .option("--name <name>", "full name")
      .option("--plan <tier-plan-id>", "a plan to hold (repeat for more; each is its own subscription)", collect, [])
      .option("--group <group-id>", "a user group to join (repeat for more)", collect, [])
      .option("--send-email", "email a welcome message")
  ).action((options: AddOptions) => add(io, options))
  withApi(
    endUsers
      .command("list")
      .description("list end users, oldest first")
      .option("--email <email>", "only the account of this email")
      .option("--limit <n>", "page size, 1 to 200 (default 50)", parsePositive)
      .option("--cursor <cursor>", "the next page, from a previous listing")
  ).action((options: ListOptions) => list(io, options))
  withApi(endUsers.command("get").description("show an end user with plans and credits").argument("<end-user-id>", "the end user")).action(
    (id: string, options: ApiOptions) => get(io, id, options)
  )
  withApi(endUsers.command("revoke").description("revoke an end user's access (idempotent)").argument("<end-user-id>", "the end user")).action(
    (id: string, options: ApiOptions) => revoke(io, id, options)
  )
}
