/** `svc orgs create|set|show|list`: organizations, their plan, feature gates and credits. */
import type { Command } from "commander"
import { gates, plans } from "../../server/identity/allowed-values.js"
import type { Organization } from "../../server/identity/domain.js"
import { withAccounts } from "../admin.js"
import { failure } from "../errors.js"
import { allOf, type DataDirOptions, oneOf, parseList, parseWholeNumber, withDataDir } from "../options.js"
import { output } from "../output.js"
import type { Block, Tone } from "../ui/blocks.js"
import type { CliIo } from "../io.js"

/** An organization's identity, as `orgs create` prints it. */
export const organizationSummary = (org: Organization) => ({ id: org.id, slug: org.slug, name: org.name, plan: org.plan })

/** An organization with its gates (sorted) and credits, as `orgs show` prints it. */
export const organizationDetails = (org: Organization) => ({
  ...organizationSummary(org),
  gates: [...org.gates].sort(),
  credits: { remaining: org.creditsRemaining, used: org.creditsUsed }
})

const detailBlocks = (title: string, org: Organization, tone: Tone = "success"): Array<Block> => {
  const details = organizationDetails(org)
  return [
    { kind: "title", text: title, tone },
    {
      kind: "fields",
      rows: [
        ["id", details.id],
        ["slug", details.slug],
        ["name", details.name],
        ["plan", details.plan],
        ["gates", details.gates.length > 0 ? details.gates.join(", ") : "none"],
        ["credits", `${details.credits.remaining.toLocaleString("en-US")} remaining, ${details.credits.used.toLocaleString("en-US")} used`]
      ]
    }
  ]
}

interface CreateOptions extends DataDirOptions {
  readonly slug: string
  readonly name?: string
  readonly plan?: string
}

interface SetOptions extends DataDirOptions {
  readonly plan?: string
  readonly enable?: Array<string>
  readonly disable?: Array<string>
  readonly credits?: number
}

const create = async (io: CliIo, options: CreateOptions) => {
  const plan = options.plan === undefined ? undefined : oneOf("plan", plans, options.plan)
  const org = await withAccounts(io, options, (a) => a.createOrganization({ slug: options.slug, name: options.name, plan }))
  await output(io, options, org, {
    json: (o) => ({ organization: organizationSummary(o) }),
    human: (o) => [
      { kind: "title", text: `Created organization ${o.slug}` },
      { kind: "fields", rows: Object.entries(organizationSummary(o)) }
    ]
  })
}

const set = async (io: CliIo, slug: string, options: SetOptions) => {
  const plan = options.plan === undefined ? undefined : oneOf("plan", plans, options.plan)
  const enable = options.enable && allOf("gate", gates, options.enable)
  const disable = options.disable && allOf("gate", gates, options.disable)
  const both = enable?.find((gate) => disable?.includes(gate))
  if (both !== undefined) throw failure(`gate '${both}' is both enabled and disabled.`)
  const org = await withAccounts(io, options, (a) => a.setOrganization(slug, { plan, enable, disable, credits: options.credits }))
  await output(io, options, org, {
    json: (o) => ({ organization: organizationDetails(o) }),
    human: (o) => detailBlocks(`Updated organization ${o.slug}`, o)
  })
}

const show = async (io: CliIo, slug: string, options: DataDirOptions) => {
  const org = await withAccounts(io, options, (a) => a.organization(slug))
  await output(io, options, org, {
    json: (o) => ({ organization: organizationDetails(o) }),
    human: (o) => detailBlocks(`Organization ${o.slug}`, o, "info")
  })
}

const list = async (io: CliIo, options: DataDirOptions) => {
  const orgs = await withAccounts(io, options, (a) => a.organizations)
  await output(io, options, orgs, {
    json: (os) => ({ organizations: os.map(organizationSummary) }),
    human: (os) => [
      { kind: "title", tone: "info", text: `${os.length} ${os.length === 1 ? "organization" : "organizations"}` },
      { kind: "table", columns: ["slug", "name", "plan", "id"], rows: os.map((o) => [o.slug, o.name, o.plan, o.id]), empty: "No organizations yet." }
    ]
  })
}

/** Registers `svc orgs`. */
export const orgsCommands = (program: Command, io: CliIo): void => {
  const orgs = program.command("orgs").description("create, change, show and list organizations")
  withDataDir(
    orgs
      .command("create")
      .description("create an organization")
      .requiredOption("--slug <slug>", "URL-safe identifier (lowercase letters, digits, hyphens)")
      .option("--name <name>", "display name (default: the slug)")
      .option("--plan <plan>", `plan: ${plans.join(", ")} (default: pro)`)
  ).action((options: CreateOptions) => create(io, options))
  withDataDir(
    orgs
      .command("set")
      .description("change an organization's plan, feature gates or credits")
      .argument("<slug>", "the organization")
      .option("--plan <plan>", `plan: ${plans.join(", ")}`)
      .option("--enable <gates>", `gates to switch on, comma-separated: ${gates.join(", ")}`, parseList)
      .option("--disable <gates>", "gates to switch off, comma-separated", parseList)
      .option("--credits <n>", "set the credits left", parseWholeNumber)
  ).action((slug: string, options: SetOptions) => set(io, slug, options))
  withDataDir(orgs.command("show").description("show an organization").argument("<slug>", "the organization")).action((slug: string, options: DataDirOptions) => show(io, slug, options))
  withDataDir(orgs.command("list").description("list the organizations, by slug")).action((options: DataDirOptions) => list(io, options))
}
