/**
 * `cli/causes.ts` reads effect's causes and fiber failures without loading effect: its answers are
 * effect's own (`Cause.failureOption`, `Cause.squash`, `Runtime.isFiberFailure`), and the CLI's
 * errors built on it keep an expected failure's code and message.
 */
import { Cause, Effect, FiberId, Option, Runtime } from "effect"
import { describe, expect, it } from "vitest"
import { fiberFailureCause, firstFailure, squashCause } from "../../cli/causes.js"
import { describe as describeError, toCliError } from "../../cli/errors.js"

const expected = { _tag: "NotFound", code: "organization_not_found", message: "No organization 'nope'." }
const defect = new Error("boom")

const causes: Record<string, Cause.Cause<unknown>> = {
  "a failure": Cause.fail(expected),
  "a defect": Cause.die(defect),
  "a defect then a failure": Cause.sequential(Cause.die(defect), Cause.fail("second")),
  "two failures side by side": Cause.parallel(Cause.fail("left"), Cause.fail("right")),
  "nested on the right": Cause.sequential(Cause.empty, Cause.parallel(Cause.die("first defect"), Cause.die("second defect")))
}

/** What a rejected `Effect.runPromise` throws for `effect`. */
const rejection = (effect: Effect.Effect<unknown, unknown>): Promise<unknown> => Effect.runPromise(effect).then(() => undefined, (error: unknown) => error)

describe("cli/causes.ts", () => {
  for (const [name, cause] of Object.entries(causes)) {
    it(`reads ${name} as effect does`, () => {
      const failure = Cause.failureOption(cause)
      expect(firstFailure(cause)).toEqual(Option.isSome(failure) ? { error: failure.value } : undefined)
      expect(squashCause(cause)).toBe(Cause.squash(cause))
    })
  }

  it("says an interruption is one", () => {
    const cause = Cause.interrupt(FiberId.none)
    expect(firstFailure(cause)).toBeUndefined()
    expect(squashCause(cause)).toBeInstanceOf(Error)
  })

  it("finds the cause of a fiber failure, and only of one", async () => {
    const error = await rejection(Effect.fail(expected))
    expect(Runtime.isFiberFailure(error)).toBe(true)
    expect(fiberFailureCause(error)).toBe((error as Runtime.FiberFailure)[Runtime.FiberFailureCauseId])
    for (const other of [defect, expected, "text", null, undefined, 1]) expect(fiberFailureCause(other)).toBeUndefined()
  })

  it("lets the CLI's errors keep an expected failure's code and message, and call a defect unexpected", async () => {
    const failed = toCliError(await rejection(Effect.fail(expected)))
    expect({ code: failed.code, message: failed.message, exitCode: failed.exitCode }).toEqual({ code: expected.code, message: expected.message, exitCode: 1 })
    expect(describeError(await rejection(Effect.fail(expected)))).toBe(expected.message)
    const died = toCliError(await rejection(Effect.die(defect)))
    expect({ code: died.code, message: died.message }).toEqual({ code: "unexpected_error", message: "unexpected error: boom" })
  })
})
