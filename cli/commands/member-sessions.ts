/** `svc members sessions|revoke-session`: a member's MCP sign-in sessions, listed and ended on the data directory. */
import type { Command } from "commander"
import type { Effect } from "effect"
import type { SignInSession } from "../../server/identity/mcp-sign-in/domain.js"
import type { McpSessions } from "../../server/identity/mcp-sign-in/sessions.js"
import { admin } from "../admin.js"
import type { CliIo } from "../io.js"
import { type DataDirOptions, withDataDir } from "../options.js"
import { output } from "../output.js"
import { type Block, shortTime } from "../ui/blocks.js"
import { noteOrgLeftOut, orgHelp } from "../org-option.js"

interface OrgOptions extends DataDirOptions {
  readonly org: string
}

interface SessionsOptions extends OrgOptions {
  readonly email: string
}

/** A sign-in session as the CLI prints it. */
export const sessionJson = (session: SignInSession) => ({ ...session })

const withSessions = async <A, E>(io: CliIo, options: DataDirOptions, use: (sessions: McpSessions) => Effect.Effect<A, E>): Promise<A> => {
  const [{ McpSessions }, Effect] = await Promise.all([import("../../server/identity/mcp-sign-in/sessions.js"), import("effect/Effect")])
  return admin(io, options, McpSessions.Default, Effect.flatMap(McpSessions, use))
}

const statusOf = (session: SignInSession) => (session.revokedAt === null ? "active" : "ended")

const list = async (io: CliIo, options: SessionsOptions) => {
  const sessions = await withSessions(io, options, (s) => s.list(options.org, options.email))
  await output(io, options, sessions, {
    json: (all) => ({ sessions: all.map(sessionJson) }),
    human: (all): Array<Block> => [
      { kind: "title", tone: "info", text: `${all.length} sign-in ${all.length === 1 ? "session" : "sessions"} of ${options.email} in ${options.org}` },
      {
        kind: "table",
        columns: ["id", "client", "address", "created", "last used", "expires", "status"],
        rows: all.map((s) => [s.id, s.clientName, s.address, shortTime(s.createdAt), shortTime(s.lastUsedAt), shortTime(s.expiresAt), statusOf(s)]),
        empty: `${options.email} has no sign-in sessions in ${options.org}.`
      }
    ]
  })
}

const revoke = async (io: CliIo, sessionId: string, options: OrgOptions) => {
  const session = await withSessions(io, options, (s) => s.end(options.org, sessionId))
  await output(io, options, session, {
    json: (s) => ({ ok: true, session: sessionJson(s) }),
    human: (s): Array<Block> => [
      { kind: "title", text: `Ended sign-in session ${s.id} (${s.clientName})` },
      { kind: "note", text: "Its tokens stop working at the next request." }
    ]
  })
}

/** Registers `svc members sessions` and `svc members revoke-session` under `members`. */
export const memberSessionsCommands = (members: Command, io: CliIo): void => {
  withDataDir(
    members
      .command("sessions")
      .description("list a member's MCP sign-in sessions")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
      .requiredOption("--email <email>", "the member's email address")
  ).action((options: SessionsOptions) => list(io, options))
  withDataDir(
    members
      .command("revoke-session")
      .description("end an MCP sign-in session; its tokens stop working at once")
      .argument("<session-id>", "the session's id (see svc members sessions)")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
  ).action((sessionId: string, options: OrgOptions) => revoke(io, sessionId, options))
}
