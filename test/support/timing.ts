/** Waiting in the suites: a pause, and polling until a condition holds. */

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `check` until it answers true (or fails the test after `timeoutMs`). */
export const eventually = async (check: () => Promise<boolean>, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await sleep(20)
  }
}
