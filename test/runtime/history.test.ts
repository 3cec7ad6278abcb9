/** The history budget: newest turns that fit beside the new message, no gaps, the message always kept. */
import { describe, expect, it } from "vitest"
import { boundHistory, estimateTokens } from "../../server/runtime/history.js"
import type { ChatTurn } from "../../server/runtime/model.js"

const turn = (role: ChatTurn["role"], chars: number, mark: string): ChatTurn => ({ role, text: mark.padEnd(chars, ".") })

describe("estimateTokens", () => {
  it("is ceil(characters / 4)", () => {
    expect(estimateTokens("")).toBe(0)
    expect(estimateTokens("a")).toBe(1)
    expect(estimateTokens("abcd")).toBe(1)
    expect(estimateTokens("abcde")).toBe(2)
    expect(estimateTokens("x".repeat(4_001))).toBe(1_001)
  })
})

describe("boundHistory", () => {
  const history = [turn("user", 40, "u1"), turn("assistant", 40, "a1"), turn("user", 40, "u2"), turn("assistant", 40, "a2")]

  it("keeps the whole history when it fits", () => {
    expect(boundHistory(history, "m".repeat(40), 50)).toEqual(history)
  })

  it("keeps the newest turns that fit beside the new message", () => {
    // 10 tokens for the message leaves 25: two turns of 10 fit, a third does not.
    expect(boundHistory(history, "m".repeat(40), 35).map((t) => t.text.slice(0, 2))).toEqual(["u2", "a2"])
  })

  it("counts a turn that exactly fills the budget", () => {
    expect(boundHistory(history, "m".repeat(40), 20).map((t) => t.text.slice(0, 2))).toEqual(["a2"])
    expect(boundHistory(history, "m".repeat(40), 19)).toEqual([])
  })

  it("leaves no gap: an older short turn is not kept past a newer one that did not fit", () => {
    const mixed = [turn("user", 4, "u1"), turn("assistant", 400, "a1"), turn("user", 4, "u2")]
    expect(boundHistory(mixed, "m", 10).map((t) => t.text.slice(0, 2))).toEqual(["u2"])
  })

  it("sends no history when the new message alone is over the budget", () => {
    expect(boundHistory(history, "m".repeat(4_000), 100)).toEqual([])
  })
})
