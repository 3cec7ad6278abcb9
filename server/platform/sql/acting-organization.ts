/**
 * The organization a request acts for, set once its caller is admitted (`identity/admission.ts`)
 * and inherited by every fiber the request starts (a detached run included). On PostgreSQL a write
 * transaction contends only with the writes of its organization (`pg-serializable.ts`): the lock
 * a re-run takes alone holds back that organization's writes and no other's.
 */
import { Effect, FiberRef } from "effect"

/** The acting organization's id, or null for the service's own work (sweeps, jobs, administration). */
export const ActingOrganization: FiberRef.FiberRef<string | null> = FiberRef.unsafeMake<string | null>(null)

/** Records that the rest of this fiber's work acts for `organizationId`. */
export const actFor = (organizationId: string): Effect.Effect<void> => FiberRef.set(ActingOrganization, organizationId)

/**
 * The 32-bit key of an organization's write lock (FNV-1a of its id; 0 for the service's own work).
 * Two organizations whose ids share a key only wait for each other's re-runs a little more.
 */
export const organizationLockKey = (organizationId: string | null): number => {
  if (organizationId === null) return 0
  let hash = 0x811c9dc5
  for (let i = 0; i < organizationId.length; i++) {
    hash ^= organizationId.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash | 0
}
