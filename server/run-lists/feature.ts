/**
 * The `runLists` feature: the organization's conversations and executions as lists and a
 * conversation's export (issue 25). No MCP tools: the conversation reads they follow have none, and
 * `get_execution` stays MCP's read of a run (docs/decisions.md).
 */
import { defineFeature } from "../platform/feature.js"
import { RunListsContract } from "./api.js"
import { RunListsHttpLive } from "./http.js"

/** Lists of runs. */
export const runListsFeature = defineFeature({
  name: "runLists",
  contract: RunListsContract,
  http: RunListsHttpLive
})
