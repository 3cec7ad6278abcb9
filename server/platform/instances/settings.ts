/** Settings of the instance registry: how often a serving process proves it is alive, and for how long each proof counts. */
import { Context, Layer } from "effect"

/** The heartbeat of the instance registry. */
export interface InstanceSettingsShape {
  /** How often an instance renews its lease, and how often a live instance looks for work left by gone ones (milliseconds). */
  readonly heartbeatMs: number
  /** How many heartbeats a lease lasts: an instance is gone once this many in a row are missed. */
  readonly leaseBeats: number
}

/** A heartbeat every 2 seconds, a lease of 3 heartbeats (6 seconds). */
export const defaultInstanceSettings: InstanceSettingsShape = { heartbeatMs: 2_000, leaseBeats: 3 }

/** The instance registry's settings in effect. */
export class InstanceSettings extends Context.Tag("svc/InstanceSettings")<InstanceSettings, InstanceSettingsShape>() {
  /** A layer with the defaults overridden by `overrides` (tests shorten the heartbeat). */
  static readonly layer = (overrides: Partial<InstanceSettingsShape> = {}) =>
    Layer.succeed(InstanceSettings, { ...defaultInstanceSettings, ...overrides })
}

/** How long one renewal keeps an instance alive. */
export const leaseMs = (settings: InstanceSettingsShape): number => settings.heartbeatMs * settings.leaseBeats
