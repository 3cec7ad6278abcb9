/** The `runs` feature: Agent conversation turns, executions and conversation reads. */
import { Effect, Layer } from "effect"
import { defineFeature } from "../../platform/feature.js"
import { RunsContract } from "./api.js"
import { RunsHttpLive } from "./http.js"
import { RunService } from "./service.js"

/** At start-up: the executions a stopped server left running are finished `failed`, their credits given back. */
const RecoverAbandonedRunsLive = Layer.effectDiscard(Effect.flatMap(RunService, (runs) => runs.recoverAbandoned))

/** Runs. */
export const runsFeature = defineFeature({
  name: "runs",
  contract: RunsContract,
  http: RunsHttpLive,
  services: RunService.Default,
  workers: RecoverAbandonedRunsLive
})
