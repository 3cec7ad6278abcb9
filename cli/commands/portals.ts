/** `svc portals create` (an organization's Portals) and the signup webhook commands of `portal-webhooks.ts`. */
import type { Command } from "commander"
import type { Portal } from "../../server/provisioning/portals/domain.js"
import { withOrganization } from "../admin.js"
import { type DataDirOptions, withDataDir } from "../options.js"
import { output } from "../output.js"
import { portalWebhookCommands } from "./portal-webhooks.js"
import type { CliIo } from "../io.js"

interface CreateOptions extends DataDirOptions {
  readonly org: string
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

/** Registers `svc portals`. */
export const portalsCommands = (program: Command, io: CliIo): void => {
  const portals = program.command("portals").description("Portals where end users sign in")
  withDataDir(
    portals
      .command("create")
      .description("create a Portal")
      .requiredOption("--org <slug>", "the organization")
      .requiredOption("--name <name>", "the Portal's name")
  ).action((options: CreateOptions) => create(io, options))
  portalWebhookCommands(portals, io)
}
