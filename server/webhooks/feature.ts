/** The `webhooks` feature: the signup webhook's endpoints, its durable outbox and the delivery worker (no REST endpoints: set from the CLI). */
import { Layer } from "effect"
import { defineFeature } from "../platform/feature.js"
import { featureContract } from "../http/contract.js"
import { WebhookWorkerLive } from "./worker.js"

/** The signup webhook. */
export const webhooksFeature = defineFeature({
  name: "webhooks",
  contract: featureContract(),
  http: Layer.empty,
  workers: WebhookWorkerLive
})
