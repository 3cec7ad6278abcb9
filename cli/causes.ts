/**
 * Reads an effect `Cause`, and the `FiberFailure` a rejected `Effect.runPromise` throws, by their
 * public shape (`_tag`, `error`, `defect`, `left`, `right`) and effect's global symbol keys instead of
 * through effect's `Cause` and `Runtime` modules: the CLI's error handling is on its start-up path,
 * which loads no effect module (docs/decisions.md, "The CLI ships as a bundle"). The CLI's tests check
 * these against `Cause.failureOption`, `Cause.squash` and `Runtime.isFiberFailure`.
 */
import type { Cause } from "effect"

/** `Runtime.FiberFailureId`: the key a `FiberFailure` carries (effect registers it with `Symbol.for`). */
const fiberFailureId = Symbol.for("effect/Runtime/FiberFailure")

/** `Runtime.FiberFailureCauseId`: the key of a `FiberFailure`'s cause. */
const fiberFailureCauseId = Symbol.for("effect/Runtime/FiberFailure/Cause")

/** The cause of a `FiberFailure` (what `Effect.runPromise` rejects with), or undefined for anything else. */
export const fiberFailureCause = (error: unknown): Cause.Cause<unknown> | undefined =>
  typeof error === "object" && error !== null && fiberFailureId in error
    ? ((error as Record<symbol, unknown>)[fiberFailureCauseId] as Cause.Cause<unknown>)
    : undefined

/** The leaves of a cause, left first: the order `Cause.failureOption` and `Cause.defects` visit them in. */
const leaves = function* (cause: Cause.Cause<unknown>): Generator<Cause.Cause<unknown>> {
  const stack = [cause]
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (item._tag === "Sequential" || item._tag === "Parallel") stack.push(item.right, item.left)
    else yield item
  }
}

/** The first expected failure of a cause (as `Cause.failureOption`), wrapped so an `undefined` failure still counts. */
export const firstFailure = (cause: Cause.Cause<unknown>): { readonly error: unknown } | undefined => {
  for (const leaf of leaves(cause)) if (leaf._tag === "Fail") return { error: leaf.error }
  return undefined
}

/**
 * The one error a cause stands for (as `Cause.squash`): its first expected failure, else its first
 * defect, else an error saying it was interrupted.
 */
export const squashCause = (cause: Cause.Cause<unknown>): unknown => {
  const failure = firstFailure(cause)
  if (failure !== undefined) return failure.error
  for (const leaf of leaves(cause)) if (leaf._tag === "Die") return leaf.defect
  return new Error("interrupted")
}
