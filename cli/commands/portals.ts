/** `svc portals create|list` (an organization's Portals) and the signup webhook commands of `portal-webhooks.ts`. */
import type { Command } from "commander"
import type { Portal } from "../../server/provisioning/portals/domain.js"
import { withOrganization } from "../admin.js"
import { type DataDirOptions, withDataDir } from "../options.js"
import { output } from "../output.js"
import { shortTime } from "../ui/blocks.js"
import { portalWebhookCommands } from "./portal-webhooks.js"
import type { CliIo } from "../io.js"
import { noteOrgLeftOut, orgHelp } from "../org-option.js"

interface OrgOptions extends DataDirOptions {
  readonly org: string
}

interface CreateOptions extends OrgOptions {
  readonly name: string
}

const create = async (io: CliIo, options: CreateOptions) => {
  const [{ PortalService }, Effect] = await Promise.all([import("../../server/provisioning/portals/service.js"), import("effect/Effect")])
  const portal: Portal = await withOrganization(io, options, PortalService.Default, (organizationId) =>
    Effect.flatMap(PortalService, (portals) => portals.create(organizationId, { name: options.name }))
  )
  await output(io, options, portal, {
    json: (p) => ({ portal: { id: p.id, name: p.name } }),
    human: (p) => [
      { kind: "title", text: `Created Portal ${p.name} in ${options.org}` },
      { kind: "fields", rows: [["id", p.id], ["name", p.name], ["address", `/portals/${p.id}/`]] }
    ]
  })
}

const list = async (io: CliIo, options: OrgOptions) => {
  const [{ PortalService }, Effect] = await Promise.all([import("../../server/provisioning/portals/service.js"), import("effect/Effect")])
  const all = await withOrganization(io, options, PortalService.Default, (organizationId) => Effect.flatMap(PortalService, (portals) => portals.all(organizationId)))
  await output(io, options, all, {
    json: (ps) => ({ portals: ps.map((p) => ({ id: p.id, name: p.name, createdAt: p.createdAt })) }),
    human: (ps) => [
      { kind: "title", tone: "info", text: `${ps.length} ${ps.length === 1 ? "Portal" : "Portals"} in ${options.org}` },
      {
        kind: "table",
        columns: ["id", "name", "address", "created"],
        rows: ps.map((p) => [p.id, p.name, `/portals/${p.id}/`, shortTime(p.createdAt)]),
        empty: `No Portals in ${options.org}.`
      }
    ]
  })
}

/** Registers `svc portals`. */
export const portalsCommands = (program: Command, io: CliIo): void => {
  const portals = program.command("portals").description("Portals where end users sign in")
  withDataDir(
    portals
      .command("create")
      .description("create a Portal")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
      .requiredOption("--name <name>", "the Portal's name")
  ).action((options: CreateOptions) => create(io, options))
  withDataDir(
    portals
      .command("list")
      .description("list the organization's Portals, oldest first")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
  ).action((options: OrgOptions) => list(io, options))
  portalWebhookCommands(portals, io)
}
