/** `svc suites create`: Suites, named bundles of an organization's Apps that a Portal shows together. */
import type { Command } from "commander"
import type { Suite } from "../../server/provisioning/suites/domain.js"
import { withOrganization } from "../admin.js"
import { type DataDirOptions, withDataDir } from "../options.js"
import { output } from "../output.js"
import type { CliIo } from "../io.js"

interface CreateOptions extends DataDirOptions {
  readonly org: string
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

/** Registers `svc suites`. */
export const suitesCommands = (program: Command, io: CliIo): void => {
  const suites = program.command("suites").description("Suites: bundles of Apps a Portal shows together")
  withDataDir(
    suites
      .command("create")
      .description("create a Suite of the organization's Apps")
      .requiredOption("--org <slug>", "the organization")
      .requiredOption("--name <name>", "the Suite's name")
      .option("--app <id>", "an App of the organization (repeat for more, in order)", (id: string, ids: Array<string>) => [...ids, id], [] as Array<string>)
  ).action((options: CreateOptions) => create(io, options))
}
