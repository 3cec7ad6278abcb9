/** The `endUsers` feature: end-user accounts, their subscriptions and per-user grants, the email outbox they write to, and its SMTP delivery. */
import { Layer } from "effect"
import { defineFeature } from "../../platform/feature.js"
import { MailDeliveryLive } from "../outbox/delivery.js"
import { Outbox } from "../outbox/service.js"
import { EndUsersContract } from "./api.js"
import { EndUsersFastLane, EndUsersHttpLive } from "./http.js"
import { EndUserService } from "./service.js"

/** End users. */
export const endUsersFeature = defineFeature({
  name: "endUsers",
  contract: EndUsersContract,
  http: EndUsersHttpLive,
  fastLane: EndUsersFastLane,
  services: Layer.merge(EndUserService.Default, Outbox.Default),
  workers: MailDeliveryLive
})
