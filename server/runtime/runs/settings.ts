/** Settings of run responses: how often a streamed reply sends its keep-alive comment. */
import { Context, Layer } from "effect"

/** How runs answer. */
export interface RunSettingsShape {
  /** Milliseconds between keep-alive comments of a streamed reply (15 s). */
  readonly keepAliveMs: number
}

/** The run settings in effect. */
export class RunSettings extends Context.Tag("svc/RunSettings")<RunSettings, RunSettingsShape>() {
  /** A layer with the defaults overridden by `overrides` (tests shorten the keep-alive). */
  static readonly layer = (overrides: Partial<RunSettingsShape> = {}) => Layer.succeed(RunSettings, { keepAliveMs: 15_000, ...overrides })
}
