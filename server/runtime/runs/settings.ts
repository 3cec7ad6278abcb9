/** Settings of run responses: keep-alive comments of streamed replies, and how run events are stored, followed, kept and drained. */
import { Context, Effect, Layer, Option } from "effect"

/** How runs answer. */
export interface RunSettingsShape {
  /** Milliseconds between keep-alive comments of a streamed reply (15 s). */
  readonly keepAliveMs: number
  /** How long a run's events wait in memory before one insert stores them (100 ms); `done`/`error` are stored at once. */
  readonly eventFlushMs: number
  /** How often a follower of a run reads its events again while nothing new arrived (250 ms). */
  readonly eventPollMs: number
  /** How long a finished run may lack its final event before a follower ends the stream from the execution's record (2 s). */
  readonly finalEventGraceMs: number
  /** How long a run's events are kept after they were recorded (24 hours). */
  readonly eventsKeptMs: number
  /** How long a closing server waits for its streamed and detached runs before it stops them, recorded `failed` (30 s). */
  readonly drainMs: number
}

/** The defaults. */
export const defaultRunSettings: RunSettingsShape = {
  keepAliveMs: 15_000,
  eventFlushMs: 100,
  eventPollMs: 250,
  finalEventGraceMs: 2_000,
  eventsKeptMs: 24 * 60 * 60 * 1000,
  drainMs: 30_000
}

/** The run settings in effect. */
export class RunSettings extends Context.Tag("svc/RunSettings")<RunSettings, RunSettingsShape>() {
  /** A layer with the defaults overridden by `overrides` (tests shorten the keep-alive). */
  static readonly layer = (overrides: Partial<RunSettingsShape> = {}) => Layer.succeed(RunSettings, { ...defaultRunSettings, ...overrides })
}

/** The run settings in effect, or the defaults where none are provided (administration builds the services without them). */
export const runSettingsOrDefaults: Effect.Effect<RunSettingsShape> = Effect.map(Effect.serviceOption(RunSettings), Option.getOrElse(() => defaultRunSettings))
