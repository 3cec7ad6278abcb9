/** The `endUsers` feature: end-user accounts, their subscriptions and per-user grants, the email outbox they write to, and its SMTP delivery. */
import { defineFeature } from "../../platform/feature.js"
import { MailDeliveryLive } from "../outbox/delivery.js"
import { EndUsersContract } from "./api.js"
import { EndUsersHttpLive } from "./http.js"
import { familyTools } from "../../mcp-door/family-tools.js"
import { endUserTools } from "./mcp.js"

/** End users. */
export const endUsersFeature = defineFeature({
  name: "endUsers",
  contract: EndUsersContract,
  http: EndUsersHttpLive,
  workers: MailDeliveryLive,
  /** Its MCP tools. */
  mcp: [familyTools("provisioning", endUserTools)]
})
