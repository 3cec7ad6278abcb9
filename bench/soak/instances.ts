/**
 * The suite's servers as a deployment (issue 24): one server process, or `count` instances on one
 * PostgreSQL database (each on a data directory of its own, as on separate machines) behind the
 * round-robin load balancer of bench/balancer.ts. The parts talk to its `front`; the crash part
 * kills and restarts its instances in turn, each on its own port, behind the same balancer.
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import type { Child } from "../children.js"
import { startBalancer } from "../instances.js"
import type { BalancerReady } from "../instances-protocol.js"
import type { SoakReady } from "./protocol.js"
import { type Backend, startSoakServer } from "./server.js"

/** A running deployment. */
export interface SoakDeployment {
  /**
   * What the parts talk to: the first instance (which made the suite's organizations), its addresses
   * the balancer's when there is one; its stdin commands (the review gate) go to the first instance.
   */
  readonly front: () => Child<SoakReady>
  /** The instances now running, in order (the crash part replaces the ones it restarts). */
  readonly instances: Array<Child<SoakReady>>
  /** Where instance `index` runs: its backend (data directory, log) and port. */
  readonly placeOf: (index: number) => { readonly backend: Backend; readonly port: number }
  readonly balancer: Child<BalancerReady> | null
  /** Stops the balancer and every instance. */
  readonly stop: () => Promise<void>
}

/** Starts `count` instances on `backend` (several only on PostgreSQL) and, for more than one, the balancer. */
export const startSoakDeployment = async (backend: Backend, count: number): Promise<SoakDeployment> => {
  if (count > 1 && !backend.database) throw new Error("--instances above 1 needs PostgreSQL (--database, or none for a throwaway cluster)")
  const backends: Array<Backend> = [backend]
  for (let n = 2; n <= count; n++) {
    const dataDir = join(backend.dataDir, `instance-${n}`)
    mkdirSync(dataDir, { recursive: true })
    backends.push({ ...backend, dataDir, logFile: join(dataDir, "server.log") })
  }
  const instances: Array<Child<SoakReady>> = []
  let balancer: Child<BalancerReady> | null = null
  const stop = async () => {
    await balancer?.stop()
    await Promise.all(instances.map((instance) => instance.stop()))
  }
  try {
    for (const each of backends) instances.push(await startSoakServer(each))
    if (count > 1) balancer = await startBalancer(instances.map((instance) => instance.ready.origin), join(backend.dataDir, "balancer.log"))
  } catch (error) {
    await stop()
    throw error
  }
  const ports = instances.map((instance) => Number(new URL(instance.ready.origin).port))
  const front = (): Child<SoakReady> => {
    const first = instances[0]!
    if (balancer === null) return first
    const { origin, baseUrl } = balancer.ready
    return { ...first, ready: { ...first.ready, origin, baseUrl } }
  }
  return { front, instances, placeOf: (index) => ({ backend: backends[index]!, port: ports[index]! }), balancer, stop }
}
