/** What the benchmarks of several instances (issue 24) and their child processes tell each other. */
import type { Ready } from "./protocol.js"

/** The load balancer's ready line (bench/balancer.ts). */
export interface BalancerReady extends Ready {
  /** The instances' origins, in the order its `counts` answer follows. */
  readonly targets: ReadonlyArray<string>
}

/** The ready line of an instance started on a database that another one set up (bench/instances-launcher.ts). */
export type InstanceReady = Ready
