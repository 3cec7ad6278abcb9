/** The `runs` feature: Agent conversation turns, executions and conversation reads. */
import { Effect, Layer } from "effect"
import { defineFeature } from "../../platform/feature.js"
import { sweepEveryHeartbeat } from "../../platform/instances/registry.js"
import { RunsContract } from "./api.js"
import { RunsHttpLive } from "./http.js"
import { RunService } from "./service.js"
import { RunEventLog } from "./event-log.js"
import { familyTools } from "../../mcp-door/family-tools.js"
import { draftRunTools } from "../mcp/draft-runs.js"
import { itemTools } from "../mcp/items.js"
import { agentRunTools } from "./mcp.js"

/**
 * Executions left running by stopped instances are finished `failed`, their credits given back: at
 * start-up (before any turn; on SQLite every one, the data directory having one owner), then every
 * heartbeat those of instances gone since (several instances on one PostgreSQL database). Every
 * heartbeat too, run events older than `eventsKeptMs` (24 hours) are deleted.
 */
const RecoverAbandonedRunsLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const runs = yield* RunService
    yield* runs.recoverAbandoned("startup")
    yield* sweepEveryHeartbeat(runs.recoverAbandoned("sweep"), yield* Effect.scope)
    yield* sweepEveryHeartbeat((yield* RunEventLog).sweep, yield* Effect.scope)
  })
)

/** Runs. */
export const runsFeature = defineFeature({
  name: "runs",
  contract: RunsContract,
  http: RunsHttpLive,
  workers: RecoverAbandonedRunsLive,
  /**
   * Its MCP tools: Agents, Apps and executions of the `run` family, the draft runs and checks of the
   * `authoring` family, and the `agents` family (one tool per published item).
   */
  mcp: [familyTools("run", agentRunTools), familyTools("authoring", draftRunTools), itemTools]
})
