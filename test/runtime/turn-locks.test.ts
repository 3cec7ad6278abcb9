/**
 * The per-conversation turn locks on their own: one holder at a time per key, waiters in arrival
 * order, other keys not held up, a waiter or holder interrupted never leaving the lock taken, and
 * no entry left once nobody holds or waits.
 */
import { Deferred, Effect, Fiber } from "effect"
import { expect, it } from "vitest"
import { makeTurnLocks } from "../../server/runtime/runs/turn-locks.js"

it("runs one turn at a time per key, in arrival order, without holding up other keys", async () => {
  const locks = makeTurnLocks()
  const order: Array<string> = []
  const program = Effect.gen(function* () {
    const release = yield* Deferred.make<void>()
    const first = yield* Effect.fork(locks.withLock("a", Effect.zipRight(Effect.sync(() => order.push("a1 start")), Deferred.await(release))))
    yield* Effect.yieldNow()
    const second = yield* Effect.fork(locks.withLock("a", Effect.sync(() => order.push("a2"))))
    const third = yield* Effect.fork(locks.withLock("a", Effect.sync(() => order.push("a3"))))
    yield* locks.withLock("b", Effect.sync(() => order.push("b")))
    yield* Effect.yieldNow()
    order.push("release a1")
    yield* Deferred.succeed(release, undefined)
    yield* Fiber.join(first)
    yield* Fiber.join(second)
    yield* Fiber.join(third)
  })
  await Effect.runPromise(program)
  expect(order).toEqual(["a1 start", "b", "release a1", "a2", "a3"])
  expect(locks.size()).toBe(0)
})

it("an interrupted waiter leaves the line and an interrupted holder lets the next one in", async () => {
  const locks = makeTurnLocks()
  const ran: Array<string> = []
  const program = Effect.gen(function* () {
    const holder = yield* Effect.fork(locks.withLock("k", Effect.never))
    yield* Effect.yieldNow()
    const waiter = yield* Effect.fork(locks.withLock("k", Effect.sync(() => ran.push("interrupted waiter"))))
    const last = yield* Effect.fork(locks.withLock("k", Effect.sync(() => ran.push("last"))))
    yield* Effect.yieldNow()
    yield* Fiber.interrupt(waiter)
    yield* Fiber.interrupt(holder)
    yield* Fiber.join(last)
  })
  await Effect.runPromise(program)
  expect(ran).toEqual(["last"])
  expect(locks.size()).toBe(0)
})

it("a failing turn releases its lock", async () => {
  const locks = makeTurnLocks()
  const failed = await Effect.runPromise(Effect.either(locks.withLock("k", Effect.fail("boom"))))
  expect(failed._tag).toBe("Left")
  expect(await Effect.runPromise(locks.withLock("k", Effect.succeed("next")))).toBe("next")
  expect(locks.size()).toBe(0)
})
