/** Settings of source ingestion: which addresses `url` sources may reach, and the worker's limits. */
import { type Clock, Context, Layer } from "effect"
import { isPublicAddress } from "../../platform/net/address-policy.js"

/** How sources are fetched and indexed. */
export interface IngestionSettings {
  /** `svc serve --allow-private-urls`: loopback and private addresses may be fetched. */
  readonly allowPrivateUrls: boolean
  /** Which addresses count as public (tests treat one loopback address as public). */
  readonly isPublic: (ip: string) => boolean
  /** Longest one job may run (fetch, extraction, indexing) before its source fails. */
  readonly jobTimeoutMs: number
  /** A job interrupted this many times (crashes, restarts) fails instead of running again. */
  readonly maxAttempts: number
  /** How often an idle worker looks for jobs queued by another process (the CLI's approvals). */
  readonly pollMs: number
  /** Time limit of a `url` fetch. */
  readonly fetchTimeoutMs: number
  /** Largest body a `url` fetch reads. */
  readonly fetchMaxBytes: number
  /**
   * The clock the worker waits on between polls and times its jobs with (`pollMs`, `jobTimeoutMs`);
   * the runtime's when absent. Tests give an Effect `TestClock` and move it by hand.
   */
  readonly clock?: Clock.Clock | undefined
}

/** The defaults: public addresses only, two minutes a job, three attempts. */
export const defaultIngestionSettings: IngestionSettings = {
  allowPrivateUrls: false,
  isPublic: isPublicAddress,
  jobTimeoutMs: 120_000,
  maxAttempts: 3,
  pollMs: 1_000,
  fetchTimeoutMs: 15_000,
  fetchMaxBytes: 4_500_000
}

/** The ingestion settings in effect. */
export class IngestionConfig extends Context.Tag("svc/IngestionConfig")<IngestionConfig, IngestionSettings>() {
  /** A layer with the defaults overridden by `overrides`. */
  static readonly layer = (overrides: Partial<IngestionSettings> = {}) =>
    Layer.succeed(IngestionConfig, { ...defaultIngestionSettings, ...overrides })
}

/** "1 second", "120 seconds". */
export const seconds = (ms: number): string => {
  const n = Math.max(1, Math.round(ms / 1000))
  return `${n} ${n === 1 ? "second" : "seconds"}`
}
