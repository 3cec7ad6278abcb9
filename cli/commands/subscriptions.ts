/**
 * `svc subscriptions set-status`: the administrator's stand-in for a payment processor. A subscription
 * marked `paid` is live with a processor, so `POST /end-users` naming its plan answers
 * `live_paid_subscription` until it is marked `active` again.
 */
import type { Command } from "commander"
import { withOrganization } from "../admin.js"
import { type DataDirOptions, oneOf, withDataDir } from "../options.js"
import { output } from "../output.js"
import type { CliIo } from "../io.js"
import { noteOrgLeftOut, orgHelp } from "../org-option.js"

const statuses = ["paid", "active"] as const

interface SetStatusOptions extends DataDirOptions {
  readonly org: string
  readonly status: string
}

const setStatus = async (io: CliIo, id: string, options: SetStatusOptions) => {
  const status = oneOf("status", statuses, options.status)
  const [{ EndUserService }, Effect] = await Promise.all([import("../../server/provisioning/end-users/service.js"), import("effect/Effect")])
  await withOrganization(io, options, EndUserService.Default, (organizationId) => Effect.flatMap(EndUserService, (endUsers) => endUsers.setPaid(organizationId, id, status === "paid")))
  await output(io, options, { id, status }, {
    json: (subscription) => ({ subscription }),
    human: (subscription) => [
      { kind: "title", text: `Subscription ${subscription.id} is ${subscription.status}` },
      {
        kind: "note",
        text:
          subscription.status === "paid"
            ? "POST /end-users naming its plan for this end user now answers live_paid_subscription."
            : "It can be provisioned through the API again."
      }
    ]
  })
}

/** Registers `svc subscriptions`. */
export const subscriptionsCommands = (program: Command, io: CliIo): void => {
  const subscriptions = program.command("subscriptions").description("end users' subscriptions (the payment processor's part)")
  withDataDir(
    subscriptions
      .command("set-status")
      .description("mark a subscription paid (live with a payment processor) or active")
      .argument("<subscription-id>", "the subscription")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
      .requiredOption("--status <status>", `${statuses.join(" or ")}`)
  ).action((id: string, options: SetStatusOptions) => setStatus(io, id, options))
}
