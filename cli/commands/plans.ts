/** `svc plans create|archive`: an organization's tier plans (each with its plan group). */
import type { Command } from "commander"
import type { TierPlan } from "../../server/provisioning/plans/domain.js"
import { withOrganization } from "../admin.js"
import { type DataDirOptions, parseWholeNumber, withDataDir } from "../options.js"
import { output } from "../output.js"
import type { CliIo } from "../io.js"

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

/** Registers `svc plans`. */
export const plansCommands = (program: Command, io: CliIo): void => {
  const plans = program.command("plans").description("tier plans end users subscribe to")
  withDataDir(
    plans
      .command("create")
      .description("create a plan and its plan group")
      .requiredOption("--org <slug>", "the organization")
      .requiredOption("--name <name>", "the plan's name")
      .requiredOption("--credits <n>", "credits per subscription per month", parseWholeNumber)
  ).action((options: CreateOptions) => create(io, options))
  withDataDir(
    plans
      .command("archive")
      .description("archive a plan: existing subscriptions keep it, new provisioning cannot use it")
      .argument("<plan-id>", "the plan")
      .requiredOption("--org <slug>", "the organization")
  ).action((id: string, options: OrgOptions) => archive(io, id, options))
}
