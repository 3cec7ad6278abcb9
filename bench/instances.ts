/**
 * Several svc instances on one PostgreSQL database behind the load balancer of bench/balancer.ts
 * (issue 24): the first instance is the mixed scenario's launcher (bench/mixed-launcher.ts: it runs
 * the migrations and makes the demo, the organizations and the keys), the others are plain
 * instances on the same database (bench/instances-launcher.ts), each on a data directory of its
 * own as on separate machines; then the balancer in front of them all.
 */
import { mkdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { askChild, type Child, spawnChild } from "./children.js"
import type { BalancerReady, InstanceReady } from "./instances-protocol.js"
import type { MixedReady, Ready } from "./protocol.js"

const here = dirname(fileURLToPath(import.meta.url))

/** A running set of instances (one, on SQLite, has no balancer). */
export interface Deployment {
  /** The first instance's ready line, its addresses those of the balancer when there is one. */
  readonly ready: MixedReady
  readonly instances: ReadonlyArray<Child<Ready>>
  readonly balancer: Child<BalancerReady> | null
}

/** Starts the balancer in front of `origins`. */
export const startBalancer = (origins: ReadonlyArray<string>, logFile: string, port = 0): Promise<Child<BalancerReady>> =>
  spawnChild<BalancerReady>({
    name: "balancer",
    script: join(here, "balancer.js"),
    args: [...origins.flatMap((origin) => ["--target", origin]), "--port", String(port)],
    logFile
  })

/** The requests the balancer sent to each of its targets so far. */
export const balancerCounts = async (balancer: Child<BalancerReady>): Promise<ReadonlyArray<number>> => {
  let counts: ReadonlyArray<number> = []
  await askChild(
    balancer,
    "counts",
    (line) => {
      const answer = (line as { counts?: ReadonlyArray<number> } | null)?.counts
      if (answer === undefined) return undefined
      counts = answer
      return true
    },
    5_000,
    "balancer: no counts within 5 s"
  )
  return counts
}

/**
 * Starts `count` instances on `database` (SQLite in `dataDir` when undefined: then one instance and
 * no balancer) with every model call sent to `modelUrl`, each pushed on `children` as it starts.
 */
export const startDeployment = async (options: {
  readonly dataDir: string
  readonly database: string | undefined
  readonly count: number
  readonly modelUrl: string
  readonly createOrgs: number
  readonly logDir: string
  readonly children: Array<Child<Ready>>
}): Promise<Deployment> => {
  if (options.database === undefined && options.count !== 1) throw new Error("several instances need a PostgreSQL database")
  const dir = (n: number) => {
    const path = join(options.dataDir, `instance-${n}`)
    mkdirSync(path, { recursive: true })
    return path
  }
  const first = await spawnChild<MixedReady>({
    name: "svc 1",
    script: join(here, "mixed-launcher.js"),
    args: [
      "--data-dir",
      dir(1),
      "--model-url",
      options.modelUrl,
      "--create-orgs",
      String(options.createOrgs),
      ...(options.database === undefined ? [] : ["--database", options.database])
    ],
    logFile: join(options.logDir, "instance-1.stderr.log"),
    readyTimeoutMs: 120_000
  })
  options.children.push(first)
  const instances: Array<Child<Ready>> = [first]
  for (let n = 2; n <= options.count; n++) {
    const instance = await spawnChild<InstanceReady>({
      name: `svc ${n}`,
      script: join(here, "instances-launcher.js"),
      args: ["--data-dir", dir(n), "--database", options.database!, "--model-url", options.modelUrl],
      logFile: join(options.logDir, `instance-${n}.stderr.log`),
      readyTimeoutMs: 60_000
    })
    options.children.push(instance)
    instances.push(instance)
  }
  if (options.database === undefined) return { ready: first.ready, instances, balancer: null }
  const balancer = await startBalancer(
    instances.map((instance) => instance.ready.origin),
    join(options.logDir, "balancer.stderr.log")
  )
  options.children.push(balancer)
  const { origin, baseUrl } = balancer.ready
  return { ready: { ...first.ready, origin, baseUrl, mcpUrl: `${origin}${new URL(first.ready.mcpUrl).pathname}` }, instances, balancer }
}
