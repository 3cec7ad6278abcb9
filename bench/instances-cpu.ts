/**
 * CPU of a run of several instances (issue 24), split per process from /proc: each svc instance,
 * the PostgreSQL cluster's processes (its postmaster and every backend it started), the load
 * balancer, this process (the load generator and the fake model) and the rest of the machine.
 */
import { machineBusyCpuMs, procCpuMs } from "./children.js"
import { clusterProcesses } from "./instances-postgres.js"

/** The processes of a run. */
export interface RunProcesses {
  readonly instances: ReadonlyArray<number>
  readonly balancer: number | null
  /** The PostgreSQL postmaster, when the cluster runs on this machine. */
  readonly postmaster: number | null
}

/** One process group's CPU over a run. */
export interface CpuShare {
  /** Cores kept busy (CPU time / wall time). */
  readonly cores: number
  /** CPU time per response, microseconds. */
  readonly usPerRequest: number
}

/** A run's CPU, per process group. */
export interface CpuSplit {
  readonly wallMs: number
  /** Every svc instance together. */
  readonly svc: CpuShare
  /** Each svc instance, in order. */
  readonly perInstance: ReadonlyArray<CpuShare>
  readonly postgres: CpuShare | null
  readonly balancer: CpuShare | null
  /** This process: the load generator and the fake model. */
  readonly loadGenerator: CpuShare
  /** Everything else on the machine (other work: noise). */
  readonly other: CpuShare | null
}

const round = (value: number, digits = 2): number => Number(value.toFixed(digits))

const clusterCpu = (postmaster: number): Map<number, number> => new Map(clusterProcesses(postmaster).map((pid) => [pid, procCpuMs(pid) ?? 0]))

/** Starts measuring `processes`; `stop(requests)` answers the split of the CPU spent since. */
export const startCpuSplit = (processes: RunProcesses): { readonly stop: (requests: number) => CpuSplit } => {
  const instancesBefore = processes.instances.map((pid) => procCpuMs(pid) ?? 0)
  const balancerBefore = processes.balancer === null ? null : (procCpuMs(processes.balancer) ?? 0)
  const postgresBefore = processes.postmaster === null ? null : clusterCpu(processes.postmaster)
  const machineBefore = machineBusyCpuMs()
  const selfBefore = process.cpuUsage()
  const startedAt = performance.now()
  return {
    stop: (requests) => {
      const wallMs = performance.now() - startedAt
      const share = (ms: number): CpuShare => ({ cores: round(ms / wallMs), usPerRequest: requests === 0 ? 0 : round((ms * 1_000) / requests, 1) })
      const perInstanceMs = processes.instances.map((pid, i) => (procCpuMs(pid) ?? instancesBefore[i]!) - instancesBefore[i]!)
      const svcMs = perInstanceMs.reduce((a, b) => a + b, 0)
      const balancerMs = processes.balancer === null || balancerBefore === null ? null : (procCpuMs(processes.balancer) ?? balancerBefore) - balancerBefore
      let postgresMs: number | null = null
      if (processes.postmaster !== null && postgresBefore !== null) {
        postgresMs = 0
        for (const [pid, after] of clusterCpu(processes.postmaster)) postgresMs += after - (postgresBefore.get(pid) ?? 0)
      }
      const self = process.cpuUsage(selfBefore)
      const selfMs = (self.user + self.system) / 1_000
      const machineAfter = machineBusyCpuMs()
      const otherMs =
        machineBefore === null || machineAfter === null ? null : Math.max(0, machineAfter - machineBefore - svcMs - selfMs - (balancerMs ?? 0) - (postgresMs ?? 0))
      return {
        wallMs: round(wallMs, 0),
        svc: share(svcMs),
        perInstance: perInstanceMs.map(share),
        postgres: postgresMs === null ? null : share(postgresMs),
        balancer: balancerMs === null ? null : share(balancerMs),
        loadGenerator: share(selfMs),
        other: otherMs === null ? null : share(otherMs)
      }
    }
  }
}
