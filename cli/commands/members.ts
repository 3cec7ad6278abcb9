/** `svc members add|set-role|remove|sessions|revoke-session`: people in an organization, their roles and their MCP sign-in sessions. */
import type { Command } from "commander"
import { roles } from "../../server/identity/allowed-values.js"
import type { Member } from "../../server/identity/domain.js"
import { withAccounts } from "../admin.js"
import { memberSessionsCommands } from "./member-sessions.js"
import { type DataDirOptions, oneOf, withDataDir } from "../options.js"
import { output } from "../output.js"
import type { Block } from "../ui/blocks.js"
import type { CliIo } from "../io.js"
import { noteOrgLeftOut, orgHelp } from "../org-option.js"

/** A member as the CLI prints it. */
export const memberJson = (member: Member) => ({ id: member.id, email: member.email, role: member.role })

const memberBlocks = (title: string, member: Member): Array<Block> => [
  { kind: "title", text: title },
  { kind: "fields", rows: Object.entries(memberJson(member)) }
]

interface MemberOptions extends DataDirOptions {
  readonly org: string
  readonly email: string
}

interface RoleOptions extends MemberOptions {
  readonly role: string
}

const add = async (io: CliIo, options: RoleOptions) => {
  const role = oneOf("role", roles, options.role)
  const member = await withAccounts(io, options, (a) => a.addMember(options.org, options.email, role))
  await output(io, options, member, {
    json: (m) => ({ member: memberJson(m) }),
    human: (m) => memberBlocks(`Added ${m.email} to ${options.org} as ${m.role}`, m)
  })
}

const setRole = async (io: CliIo, options: RoleOptions) => {
  const role = oneOf("role", roles, options.role)
  const member = await withAccounts(io, options, (a) => a.setMemberRole(options.org, options.email, role))
  await output(io, options, member, {
    json: (m) => ({ member: memberJson(m) }),
    human: (m) => memberBlocks(`${m.email} is now ${m.role} in ${options.org}`, m)
  })
}

const remove = async (io: CliIo, options: MemberOptions) => {
  const member = await withAccounts(io, options, (a) => a.removeMember(options.org, options.email))
  await output(io, options, member, {
    json: (m) => ({ ok: true, member: memberJson(m) }),
    human: (m) => [
      ...memberBlocks(`Removed ${m.email} from ${options.org}`, m),
      { kind: "note", text: "Their personal keys stopped working." }
    ]
  })
}

const memberCommand = (parent: Command, name: string, description: string): Command =>
  parent
    .command(name)
    .description(description)
    .option("--org <slug>", orgHelp)
    .hook("preAction", noteOrgLeftOut)
    .requiredOption("--email <email>", "the member's email address")

/** Registers `svc members`. */
export const membersCommands = (program: Command, io: CliIo): void => {
  const members = program.command("members").description("add members, change their roles, remove them, list and end their sign-in sessions")
  const role = `role: ${roles.join(", ")}`
  withDataDir(memberCommand(members, "add", "add a member to an organization").requiredOption("--role <role>", role)).action((options: RoleOptions) => add(io, options))
  withDataDir(memberCommand(members, "set-role", "change a member's role").requiredOption("--role <role>", role)).action((options: RoleOptions) => setRole(io, options))
  withDataDir(memberCommand(members, "remove", "remove a member; their personal keys stop working at once")).action((options: MemberOptions) => remove(io, options))
  memberSessionsCommands(members, io)
}
