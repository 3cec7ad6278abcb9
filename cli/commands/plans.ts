/** `svc plans create|archive|list`: an organization's tier plans (each with its plan group). */
import type { Command } from "commander"
import type { TierPlan } from "../../server/provisioning/plans/domain.js"
import { withOrganization } from "../admin.js"
import { type DataDirOptions, parseWholeNumber, withDataDir } from "../options.js"
import { output } from "../output.js"
import type { CliIo } from "../io.js"
import { noteOrgLeftOut, orgHelp } from "../org-option.js"

interface OrgOptions extends DataDirOptions {
  readonly org: string
}

interface CreateOptions extends OrgOptions {
  readonly name: string
  readonly credits: number
}

/** A plan as `svc plans create` prints it. */
export const tierPlanJson = (plan: TierPlan) => ({ id: plan.id, name: plan.name, creditAllowance: plan.creditAllowance, groupId: plan.groupId })

const create = async (io: CliIo, options: CreateOptions) => {
  const [{ TierPlanService }, Effect] = await Promise.all([import("../../server/provisioning/plans/service.js"), import("effect/Effect")])
  const plan = await withOrganization(io, options, TierPlanService.Default, (organizationId) =>
    Effect.flatMap(TierPlanService, (plans) => plans.create(organizationId, { name: options.name, creditAllowance: options.credits }))
  )
  await output(io, options, plan, {
    json: (p) => ({ tierPlan: tierPlanJson(p) }),
    human: (p) => [
      { kind: "title", text: `Created plan ${p.name} in ${options.org}` },
      { kind: "fields", rows: [["id", p.id], ["name", p.name], ["credits", p.creditAllowance.toLocaleString("en-US")], ["plan group", p.groupId]] }
    ]
  })
}

const archive = async (io: CliIo, id: string, options: OrgOptions) => {
  const [{ TierPlanService }, Effect] = await Promise.all([import("../../server/provisioning/plans/service.js"), import("effect/Effect")])
  const plan = await withOrganization(io, options, TierPlanService.Default, (organizationId) => Effect.flatMap(TierPlanService, (plans) => plans.archive(organizationId, id)))
  await output(io, options, plan, {
    json: (p) => ({ tierPlan: { ...tierPlanJson(p), archived: p.archived } }),
    human: (p) => [
      { kind: "title", text: `Archived plan ${p.name}` },
      { kind: "note", text: "Existing subscriptions keep it; new provisioning with it answers tier_not_found." }
    ]
  })
}

const list = async (io: CliIo, options: OrgOptions) => {
  const [{ TierPlanService }, Effect] = await Promise.all([import("../../server/provisioning/plans/service.js"), import("effect/Effect")])
  const all = await withOrganization(io, options, TierPlanService.Default, (organizationId) => Effect.flatMap(TierPlanService, (plans) => plans.all(organizationId)))
  await output(io, options, all, {
    json: (ps) => ({ tierPlans: ps.map((p) => ({ ...tierPlanJson(p), archived: p.archived })) }),
    human: (ps) => [
      { kind: "title", tone: "info", text: `${ps.length} ${ps.length === 1 ? "plan" : "plans"} in ${options.org}` },
      {
        kind: "table",
        columns: ["id", "name", "credits", "status", "plan group"],
        rows: ps.map((p) => [p.id, p.name, p.creditAllowance.toLocaleString("en-US"), p.archived ? "archived" : "active", p.groupId]),
        empty: `No plans in ${options.org}.`
      }
    ]
  })
}

/** Registers `svc plans`. */
export const plansCommands = (program: Command, io: CliIo): void => {
  const plans = program.command("plans").description("tier plans end users subscribe to")
  withDataDir(
    plans
      .command("create")
      .description("create a plan and its plan group")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
      .requiredOption("--name <name>", "the plan's name")
      .requiredOption("--credits <n>", "credits per subscription per month", parseWholeNumber)
  ).action((options: CreateOptions) => create(io, options))
  withDataDir(
    plans
      .command("archive")
      .description("archive a plan: existing subscriptions keep it, new provisioning cannot use it")
      .argument("<plan-id>", "the plan")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
  ).action((id: string, options: OrgOptions) => archive(io, id, options))
  withDataDir(
    plans
      .command("list")
      .description("list the organization's plans, archived ones included, oldest first")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
  ).action((options: OrgOptions) => list(io, options))
}
