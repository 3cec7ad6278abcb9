/** `svc suites create|list`: Suites, named bundles of an organization's Apps that a Portal shows together. */
import type { Command } from "commander"
import type { Suite } from "../../server/provisioning/suites/domain.js"
import { withOrganization } from "../admin.js"
import { type DataDirOptions, withDataDir } from "../options.js"
import { output } from "../output.js"
import type { CliIo } from "../io.js"
import { noteOrgLeftOut, orgHelp } from "../org-option.js"

interface OrgOptions extends DataDirOptions {
  readonly org: string
}

interface CreateOptions extends OrgOptions {
  readonly name: string
  readonly app: ReadonlyArray<string>
}

const create = async (io: CliIo, options: CreateOptions) => {
  const [{ SuiteService }, Effect] = await Promise.all([import("../../server/provisioning/suites/service.js"), import("effect/Effect")])
  const suite: Suite = await withOrganization(io, options, SuiteService.Default, (organizationId) =>
    Effect.flatMap(SuiteService, (suites) => suites.create(organizationId, { name: options.name, appIds: options.app }))
  )
  await output(io, options, suite, {
    json: (s) => ({ suite: { id: s.id, name: s.name, appIds: s.appIds } }),
    human: (s) => [
      { kind: "title", text: `Created Suite ${s.name} in ${options.org}` },
      { kind: "fields", rows: [["id", s.id], ["name", s.name], ["apps", s.appIds.length === 0 ? "(none)" : s.appIds.join(", ")]] },
      { kind: "note", text: "Grant a user group access to every App in it: POST /user-groups/{id}/grants with targetKind suite." }
    ]
  })
}

const list = async (io: CliIo, options: OrgOptions) => {
  const [{ SuiteService }, Effect] = await Promise.all([import("../../server/provisioning/suites/service.js"), import("effect/Effect")])
  const all = await withOrganization(io, options, SuiteService.Default, (organizationId) => Effect.flatMap(SuiteService, (suites) => suites.all(organizationId)))
  await output(io, options, all, {
    json: (ss) => ({ suites: ss.map((s) => ({ id: s.id, name: s.name, appIds: s.appIds })) }),
    human: (ss) => [
      { kind: "title", tone: "info", text: `${ss.length} ${ss.length === 1 ? "Suite" : "Suites"} in ${options.org}` },
      {
        kind: "table",
        columns: ["id", "name", "apps"],
        rows: ss.map((s) => [s.id, s.name, s.appIds.length === 0 ? "(none)" : s.appIds.join(", ")]),
        empty: `No Suites in ${options.org}.`
      }
    ]
  })
}

/** Registers `svc suites`. */
export const suitesCommands = (program: Command, io: CliIo): void => {
  const suites = program.command("suites").description("Suites: bundles of Apps a Portal shows together")
  withDataDir(
    suites
      .command("create")
      .description("create a Suite of the organization's Apps")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
      .requiredOption("--name <name>", "the Suite's name")
      .option("--app <id>", "an App of the organization (repeat for more, in order)", (id: string, ids: Array<string>) => [...ids, id], [] as Array<string>)
  ).action((options: CreateOptions) => create(io, options))
  withDataDir(
    suites
      .command("list")
      .description("list the organization's Suites with their Apps, oldest first")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
  ).action((options: OrgOptions) => list(io, options))
}
