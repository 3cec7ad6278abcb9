/**
 * `svc portals webhook|webhook-test|deliveries|redeliver`: a Portal's signup webhook, set on the
 * data directory like the dashboard would (the signing secret is printed once, on the first
 * enable), a clearly marked test event, and the delivery log with redelivery.
 */
import { type Command, Option } from "commander"
import type { Delivery } from "../../server/webhooks/domain.js"
import type { WebhookService } from "../../server/webhooks/service.js"
import type { Effect } from "effect"
import { withOrganization } from "../admin.js"
import { CliError } from "../errors.js"
import type { CliIo } from "../io.js"
import { type DataDirOptions, withDataDir } from "../options.js"
import { output } from "../output.js"
import { type Block, shortTime } from "../ui/blocks.js"
import { noteOrgLeftOut, orgHelp } from "../org-option.js"

interface OrgOptions extends DataDirOptions {
  readonly org: string
}

interface WebhookOptions extends OrgOptions {
  readonly url?: string
  readonly enable?: boolean
  readonly disable?: boolean
}

/** Runs `use` with the webhook service in the organization `options.org`. */
const withWebhooks = async <A, E>(
  io: CliIo,
  options: OrgOptions,
  use: (webhooks: WebhookService, organizationId: string) => Effect.Effect<A, E>
): Promise<A> => {
  const [{ WebhookService }, { WebhookSettings }, Effect, Layer] = await Promise.all([
    import("../../server/webhooks/service.js"),
    import("../../server/webhooks/domain.js"),
    import("effect/Effect"),
    import("effect/Layer")
  ])
  const services = Layer.provide(WebhookService.Default, WebhookSettings.layer())
  return withOrganization(io, options, services, (organizationId) => Effect.flatMap(WebhookService, (webhooks) => use(webhooks, organizationId)))
}

/** The last attempt's outcome in a few words. */
const lastOutcome = (delivery: Delivery): string => {
  const last = delivery.attempts.at(-1)
  if (last === undefined) return "not tried yet"
  return last.statusCode !== null && last.error === null ? `HTTP ${last.statusCode}` : (last.error ?? `HTTP ${last.statusCode}`)
}

const deliveryBlocks = (delivery: Delivery): Array<Block> => [
  {
    kind: "title",
    tone: delivery.status === "delivered" ? "success" : delivery.status === "failed" ? "warning" : "info",
    text: `Delivery ${delivery.id}: ${delivery.status}${delivery.test ? " (test event)" : ""}`
  },
  {
    kind: "fields",
    rows: [
      ["event", delivery.event],
      ["url", delivery.url],
      ["status", delivery.status],
      ["attempts", String(delivery.attempts.length)],
      ["last outcome", lastOutcome(delivery)],
      ...(delivery.nextAttemptAt === null ? [] : [["next attempt", shortTime(delivery.nextAttemptAt)] as const])
    ]
  },
  {
    kind: "table",
    columns: ["attempt", "started", "took", "outcome"],
    rows: delivery.attempts.map((a) => [
      `${a.attempt}${a.manual ? " (manual)" : ""}`,
      shortTime(a.startedAt),
      `${a.durationMs} ms`,
      a.error ?? `HTTP ${a.statusCode}`
    ]),
    empty: "No attempt yet."
  }
]

const configure = async (io: CliIo, portalId: string, options: WebhookOptions) => {
  if (options.enable && options.disable) throw new CliError("Give --enable or --disable, not both.", 1, "invalid_arguments")
  const change = {
    ...(options.url === undefined ? {} : { url: options.url }),
    ...(options.enable ? { enabled: true } : options.disable ? { enabled: false } : {})
  }
  const result = await withWebhooks(io, options, (webhooks, organizationId) => webhooks.configure(organizationId, portalId, change))
  await output(io, options, result, {
    json: (r) => ({ webhook: r.webhook, secret: r.secret }),
    human: (r): Array<Block> => [
      { kind: "title", tone: "success", text: `The signup webhook of Portal ${portalId} is ${r.webhook.enabled ? "enabled" : "disabled"}` },
      { kind: "fields", rows: [["url", r.webhook.url], ["enabled", r.webhook.enabled ? "yes" : "no"], ["updated", shortTime(r.webhook.updatedAt)]] },
      ...(r.secret === null
        ? []
        : [{ kind: "secret", label: "signing secret", value: r.secret, note: "Shown once: verify deliveries with it (the SDK's verifyWebhook)." } as const])
    ]
  })
}

const sendTest = async (io: CliIo, portalId: string, options: OrgOptions) => {
  const delivery = await withWebhooks(io, options, (webhooks, organizationId) => webhooks.sendTest(organizationId, portalId))
  await output(io, options, delivery, { json: (d) => ({ delivery: d }), human: deliveryBlocks })
}

const listDeliveries = async (io: CliIo, portalId: string, options: OrgOptions) => {
  const deliveries = await withWebhooks(io, options, (webhooks, organizationId) => webhooks.deliveries(organizationId, portalId))
  await output(io, options, deliveries, {
    json: (ds) => ({ deliveries: ds }),
    human: (ds): Array<Block> => [
      {
        kind: "table",
        columns: ["id", "event", "status", "attempts", "last outcome", "created"],
        rows: ds.map((d) => [d.id, `${d.event}${d.test ? " (test)" : ""}`, d.status, String(d.attempts.length), lastOutcome(d), shortTime(d.createdAt)]),
        empty: "No deliveries yet."
      }
    ]
  })
}

const redeliver = async (io: CliIo, deliveryId: string, options: OrgOptions) => {
  const delivery = await withWebhooks(io, options, (webhooks, organizationId) => webhooks.redeliver(organizationId, deliveryId))
  await output(io, options, delivery, { json: (d) => ({ delivery: d }), human: deliveryBlocks })
}

/** Adds the webhook commands to `svc portals`. */
export const portalWebhookCommands = (portals: Command, io: CliIo): void => {
  withDataDir(
    portals
      .command("webhook")
      .description("set a Portal's signup webhook: its URL and whether it is enabled (the signing secret is printed once, on the first enable)")
      .argument("<portal-id>", "the Portal")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
      .option("--url <url>", "the endpoint (http or https; loopback allowed)")
      .addOption(new Option("--enable", "send signup events").conflicts("disable"))
      .addOption(new Option("--disable", "stop sending signup events"))
  ).action((portalId: string, options: WebhookOptions) => configure(io, portalId, options))
  withDataDir(
    portals
      .command("webhook-test")
      .description("send a clearly marked test event to a Portal's webhook now")
      .argument("<portal-id>", "the Portal")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
  ).action((portalId: string, options: OrgOptions) => sendTest(io, portalId, options))
  withDataDir(
    portals
      .command("deliveries")
      .description("list a Portal's webhook deliveries with their attempts, newest first")
      .argument("<portal-id>", "the Portal")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
  ).action((portalId: string, options: OrgOptions) => listDeliveries(io, portalId, options))
  withDataDir(
    portals
      .command("redeliver")
      .description("send a webhook delivery again now")
      .argument("<delivery-id>", "the delivery")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
  ).action((deliveryId: string, options: OrgOptions) => redeliver(io, deliveryId, options))
}
