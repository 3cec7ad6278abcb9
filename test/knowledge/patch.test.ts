import { Either, ParseResult, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  applyPatch,
  describeRefusal,
  describeTooLarge,
  fitsPageBody,
  maxPageBodyBytes,
  maxPatchOperations,
  maxPatchWork,
  PatchOperation,
  PatchOperations,
  type PatchResult
} from "../../server/knowledge/pages/patch.js"

/** Decodes a raw `patch` array like the endpoint will, failing the test on refusal. */
const decode = (input: unknown): PatchOperations => Schema.decodeUnknownSync(PatchOperations)(input)

/** The formatted decode error of a raw `patch` array, failing the test on success. */
const decodeError = (input: unknown): string => {
  const result = Schema.decodeUnknownEither(PatchOperations)(input)
  if (Either.isRight(result)) throw new Error(`expected a decode failure, got ${JSON.stringify(result.right)}`)
  return ParseResult.TreeFormatter.formatErrorSync(result.left)
}

const apply = (markdown: string, raw: unknown): PatchResult => applyPatch(markdown, decode(raw))

const applied = (markdown: string, raw: unknown): string => {
  const result = apply(markdown, raw)
  if (result._tag === "Refused") throw new Error(describeRefusal(result))
  if (result._tag === "TooLarge") throw new Error(describeTooLarge(result))
  return result.markdown
}

const page = "# Returns\n\nRefunds take 5 days.\n\n## Contact\n\nsupport@example.com\n"

describe("applyPatch: each operation", () => {
  it("replace swaps the unique oldString", () => {
    expect(applied(page, [{ op: "replace", oldString: "5 days", newString: "3 days" }])).toBe(
      page.replace("5 days", "3 days")
    )
  })

  it("replace takes newString literally (no $ patterns)", () => {
    expect(applied("price: X", [{ op: "replace", oldString: "X", newString: "$& $1 $$" }])).toBe("price: $& $1 $$")
  })

  it("replace with replaceAll: false behaves like a unique replace", () => {
    expect(applied("a b", [{ op: "replace", oldString: "a", newString: "c", replaceAll: false }])).toBe("c b")
    expect(apply("a a", [{ op: "replace", oldString: "a", newString: "c", replaceAll: false }])).toMatchObject({
      _tag: "Refused",
      reason: "oldString appears 2 times; make the anchor longer so it is unique"
    })
  })

  it("insert_before puts text right before the anchor", () => {
    expect(applied(page, [{ op: "insert_before", anchor: "## Contact", text: "## Shipping\n\n" }])).toBe(
      "# Returns\n\nRefunds take 5 days.\n\n## Shipping\n\n## Contact\n\nsupport@example.com\n"
    )
  })

  it("insert_after puts text right after the anchor", () => {
    expect(applied(page, [{ op: "insert_after", anchor: "5 days.", text: " Free of charge." }])).toBe(
      "# Returns\n\nRefunds take 5 days. Free of charge.\n\n## Contact\n\nsupport@example.com\n"
    )
  })

  it("prepend and append add text verbatim, without an implicit newline", () => {
    expect(applied("body", [{ op: "prepend", text: "head" }])).toBe("headbody")
    expect(applied("body", [{ op: "append", text: "tail" }])).toBe("bodytail")
    expect(applied("", [{ op: "append", text: "x" }, { op: "prepend", text: "y" }])).toBe("yx")
  })

  it("an empty text is allowed", () => {
    expect(applied("ab", [{ op: "insert_after", anchor: "a", text: "" }])).toBe("ab")
    expect(applied("ab", [{ op: "replace", oldString: "a", newString: "" }])).toBe("b")
  })
})

describe("applyPatch: ordering", () => {
  it("each operation sees the result of the previous one", () => {
    const result = applied("start", [
      { op: "append", text: "\nMARKER" },
      { op: "insert_after", anchor: "MARKER", text: " done" },
      { op: "replace", oldString: "start", newString: "begin" }
    ])
    expect(result).toBe("begin\nMARKER done")
  })

  it("an anchor made ambiguous by an earlier operation is refused", () => {
    expect(
      apply("one", [
        { op: "append", text: " one" },
        { op: "insert_after", anchor: "one", text: "!" }
      ])
    ).toEqual({
      _tag: "Refused",
      index: 1,
      op: "insert_after",
      reason: "anchor appears 2 times; make the anchor longer so it is unique"
    })
  })

  it("an anchor removed by an earlier operation is not found", () => {
    expect(
      apply("keep drop", [
        { op: "replace", oldString: " drop", newString: "" },
        { op: "insert_before", anchor: "drop", text: "x" }
      ])
    ).toMatchObject({ _tag: "Refused", index: 1, reason: "anchor not found" })
  })

  it("reports the first failing index and returns nothing partial", () => {
    const result = apply("alpha beta", [
      { op: "append", text: "!" },
      { op: "replace", oldString: "alpha", newString: "ALPHA" },
      { op: "insert_after", anchor: "gamma", text: "x" },
      { op: "insert_after", anchor: "delta", text: "y" }
    ])
    expect(result).toEqual({ _tag: "Refused", index: 2, op: "insert_after", reason: "anchor not found" })
    expect(result).not.toHaveProperty("markdown")
  })

  it("applies up to the maximum number of operations", () => {
    const ops = Array.from({ length: maxPatchOperations }, () => ({ op: "append", text: "x" }))
    expect(applied("", ops)).toBe("x".repeat(maxPatchOperations))
  })
})

describe("applyPatch: missing and ambiguous anchors", () => {
  const cases = [
    { name: "replace", make: (a: string) => ({ op: "replace", oldString: a, newString: "z" }), field: "oldString" },
    { name: "insert_before", make: (a: string) => ({ op: "insert_before", anchor: a, text: "z" }), field: "anchor" },
    { name: "insert_after", make: (a: string) => ({ op: "insert_after", anchor: a, text: "z" }), field: "anchor" },
    { name: "replace_range (from)", make: (a: string) => ({ op: "replace_range", from: a, to: "END" }), field: "from" },
    { name: "replace_range (to)", make: (a: string) => ({ op: "replace_range", from: "START", to: a }), field: "to" }
  ]
  const text = "START dup dup END"

  for (const { name, make, field } of cases) {
    it(`${name}: missing anchor is refused`, () => {
      const result = apply(text, [make("absent")])
      expect(result).toMatchObject({ _tag: "Refused", index: 0, reason: `${field} not found` })
    })

    it(`${name}: ambiguous anchor is refused with the count`, () => {
      const result = apply(text, [make("dup")])
      expect(result).toMatchObject({
        _tag: "Refused",
        index: 0,
        reason: `${field} appears 2 times; make the anchor longer so it is unique`
      })
    })
  }

  it("overlapping occurrences make an anchor ambiguous", () => {
    expect(apply("aaa", [{ op: "insert_after", anchor: "aa", text: "x" }])).toMatchObject({
      _tag: "Refused",
      reason: "anchor appears 2 times; make the anchor longer so it is unique"
    })
  })

  it("anchors are plain text, not patterns", () => {
    expect(applied("a.b axb (x)", [{ op: "replace", oldString: "a.b", newString: "A" }])).toBe("A axb (x)")
    expect(applied("a.b axb (x)", [{ op: "insert_before", anchor: "(x)", text: "!" }])).toBe("a.b axb !(x)")
  })

  it("an empty anchor is refused even when the schema was bypassed", () => {
    const ops: ReadonlyArray<PatchOperation> = [{ op: "insert_after", anchor: "", text: "x" }]
    expect(applyPatch("abc", ops)).toMatchObject({ _tag: "Refused", reason: "anchor is empty" })
    const all: ReadonlyArray<PatchOperation> = [{ op: "replace", oldString: "", newString: "x", replaceAll: true }]
    expect(applyPatch("abc", all)).toMatchObject({ _tag: "Refused", reason: "oldString is empty" })
  })
})

describe("applyPatch: replaceAll", () => {
  it("refuses when there is no occurrence", () => {
    expect(apply("abc", [{ op: "replace", oldString: "x", newString: "y", replaceAll: true }])).toEqual({
      _tag: "Refused",
      index: 0,
      op: "replace",
      reason: "oldString not found"
    })
  })

  it("replaces a single occurrence", () => {
    expect(applied("abc", [{ op: "replace", oldString: "b", newString: "B", replaceAll: true }])).toBe("aBc")
  })

  it("replaces every occurrence", () => {
    expect(applied("cat, cat and cat", [{ op: "replace", oldString: "cat", newString: "dog", replaceAll: true }])).toBe(
      "dog, dog and dog"
    )
  })

  it("replaces non-overlapping occurrences left to right", () => {
    expect(applied("aaaaa", [{ op: "replace", oldString: "aa", newString: "b", replaceAll: true }])).toBe("bba")
  })

  it("does not rescan its own replacement", () => {
    expect(applied("a-a", [{ op: "replace", oldString: "a", newString: "aa", replaceAll: true }])).toBe("aa-aa")
  })
})

describe("applyPatch: replace_range", () => {
  const doc = "intro\n## Old\nold text\n## Next\nrest"

  it("replaces from the start of `from` (inclusive) to the start of `to` (exclusive)", () => {
    expect(applied(doc, [{ op: "replace_range", from: "## Old", to: "## Next", text: "## New\nnew text\n" }])).toBe(
      "intro\n## New\nnew text\n## Next\nrest"
    )
  })

  it("text defaults to empty, deleting the range", () => {
    expect(applied(doc, [{ op: "replace_range", from: "## Old", to: "## Next" }])).toBe("intro\n## Next\nrest")
  })

  it("accepts `to` starting exactly where `from` ends", () => {
    expect(applied("abcd", [{ op: "replace_range", from: "ab", to: "cd", text: "X" }])).toBe("Xcd")
  })

  it("refuses a range whose `to` comes before `from`", () => {
    expect(apply(doc, [{ op: "replace_range", from: "## Next", to: "## Old" }])).toEqual({
      _tag: "Refused",
      index: 0,
      op: "replace_range",
      reason: "range misordered: to comes before from"
    })
  })

  it("refuses a `to` that overlaps `from`", () => {
    expect(apply("abcdef", [{ op: "replace_range", from: "abcd", to: "cde" }])).toMatchObject({
      _tag: "Refused",
      reason: "range misordered: to overlaps from; it must start at or after the end of from"
    })
  })

  it("refuses a `to` inside `from` and the same anchor for both", () => {
    expect(apply("abcdef", [{ op: "replace_range", from: "abcd", to: "bc" }])).toMatchObject({ _tag: "Refused" })
    expect(apply("abcdef", [{ op: "replace_range", from: "cd", to: "cd" }])).toMatchObject({ _tag: "Refused" })
  })
})

describe("applyPatch: unicode", () => {
  it("handles multibyte text and anchors", () => {
    const text = "Grüße 👋 aus Zürich — 東京"
    expect(
      applied(text, [
        { op: "replace", oldString: "👋", newString: "🙂🙂" },
        { op: "insert_after", anchor: "Zürich", text: " und" },
        { op: "replace_range", from: "—", to: "東京", text: "→ " },
        { op: "append", text: " ✓" }
      ])
    ).toBe("Grüße 🙂🙂 aus Zürich und → 東京 ✓")
  })

  it("counts an emoji anchor's occurrences", () => {
    expect(apply("🎉 x 🎉", [{ op: "insert_before", anchor: "🎉", text: "!" }])).toMatchObject({
      reason: "anchor appears 2 times; make the anchor longer so it is unique"
    })
  })
})

describe("describeRefusal", () => {
  it("names the index and the op", () => {
    const result = apply("a b c", [
      { op: "append", text: "!" },
      { op: "prepend", text: "?" },
      { op: "insert_after", anchor: "zzz", text: "x" }
    ])
    if (result._tag !== "Refused") throw new Error("expected a refusal")
    expect(describeRefusal(result)).toBe("patch[2] (insert_after): anchor not found")
  })
})

describe("PatchOperations schema", () => {
  it("decodes every op", () => {
    const ops = decode([
      { op: "replace", oldString: "a", newString: "b" },
      { op: "replace", oldString: "a", newString: "b", replaceAll: true },
      { op: "insert_before", anchor: "a", text: "b" },
      { op: "insert_after", anchor: "a", text: "b" },
      { op: "prepend", text: "b" },
      { op: "append", text: "b" },
      { op: "replace_range", from: "a", to: "b", text: "c" }
    ])
    expect(ops).toHaveLength(7)
  })

  it("fills replace_range's text with an empty default", () => {
    expect(decode([{ op: "replace_range", from: "a", to: "b" }])).toEqual([
      { op: "replace_range", from: "a", to: "b", text: "" }
    ])
  })

  it("refuses an unknown op", () => {
    expect(decodeError([{ op: "delete", anchor: "a" }])).toContain('actual "delete"')
  })

  it("refuses an unknown property on an op, naming it", () => {
    const message = decodeError([{ op: "append", text: "x", position: "end" }])
    expect(message).toContain('["position"]')
    expect(message).toContain("is unexpected")
  })

  it("refuses a property that belongs to another op", () => {
    expect(decodeError([{ op: "insert_after", anchor: "a", text: "b", replaceAll: true }])).toContain('["replaceAll"]')
  })

  it("reports all problems of an op at once", () => {
    const message = decodeError([{ op: "replace", oldString: "", newString: "x", bogus: 1 }])
    expect(message).toContain('["bogus"]')
    expect(message).toContain("an anchor must not be empty")
  })

  it("refuses missing fields", () => {
    expect(decodeError([{ op: "replace", oldString: "a" }])).toContain('["newString"]')
    expect(decodeError([{ op: "append" }])).toContain('["text"]')
  })

  it("refuses wrong field types", () => {
    expect(decodeError([{ op: "replace", oldString: "a", newString: "b", replaceAll: "yes" }])).toContain(
      '["replaceAll"]'
    )
  })

  it(`refuses more than ${maxPatchOperations} operations`, () => {
    const ops = Array.from({ length: maxPatchOperations + 1 }, () => ({ op: "append", text: "x" }))
    expect(decodeError(ops)).toContain("patch holds 51 operations; at most 50 are allowed per request")
    expect(decode(ops.slice(1))).toHaveLength(50)
  })

  it("refuses an empty array and a non-array", () => {
    expect(decodeError([])).toContain("patch must hold at least one operation")
    expect(decodeError({ op: "append", text: "x" })).toContain("Expected ReadonlyArray")
  })

  it("refuses empty anchors", () => {
    expect(decodeError([{ op: "insert_before", anchor: "", text: "x" }])).toContain("an anchor must not be empty")
    expect(decodeError([{ op: "insert_after", anchor: "", text: "x" }])).toContain("an anchor must not be empty")
    expect(decodeError([{ op: "replace", oldString: "", newString: "x" }])).toContain("an anchor must not be empty")
    expect(decodeError([{ op: "replace_range", from: "", to: "b" }])).toContain('["from"]')
    expect(decodeError([{ op: "replace_range", from: "a", to: "" }])).toContain('["to"]')
  })

  it("carries identifiers for documentation", () => {
    expect(String(PatchOperations.ast)).toBe("PatchOperations")
    expect(String(PatchOperation.ast)).toBe("PatchOperation")
  })
})

describe("applyPatch: size and work bounds", () => {
  const doubling = { op: "replace", oldString: "alpha", newString: "alpha alpha", replaceAll: true }

  it("refuses a doubling replaceAll at the operation that reaches the limit, before building it", () => {
    const started = performance.now()
    const result = apply("alpha beta gamma alpha", Array.from({ length: 26 }, () => doubling))
    expect(performance.now() - started).toBeLessThan(1_000)
    // The operation at index k would write 2^(k+2) "alpha"s of 6 bytes each: index 14 is the first to reach 256 KB.
    expect(result).toEqual({ _tag: "TooLarge", index: 14, op: "replace", limit: "body" })
  })

  it("checks the limit after each operation, even when a later one would shrink the body", () => {
    const result = apply("x", [
      { op: "append", text: "a".repeat(maxPageBodyBytes) },
      { op: "replace_range", from: "x", to: "a", text: "" }
    ])
    expect(result).toEqual({ _tag: "TooLarge", index: 0, op: "append", limit: "body" })
  })

  it("counts UTF-8 bytes after each operation", () => {
    expect(apply("", [{ op: "append", text: "é".repeat(maxPageBodyBytes / 2) }])).toMatchObject({ _tag: "TooLarge", limit: "body" })
    expect(apply("", [{ op: "append", text: "é".repeat(maxPageBodyBytes / 2 - 1) }])).toMatchObject({ _tag: "Applied" })
  })

  it("stops a patch whose self-overlapping anchors would scan without bound", () => {
    const text = "a".repeat(200_000)
    const started = performance.now()
    const result = apply(text, [{ op: "insert_after", anchor: "a".repeat(4_000), text: "x" }])
    expect(performance.now() - started).toBeLessThan(1_000)
    expect(result).toEqual({ _tag: "TooLarge", index: 0, op: "insert_after", limit: "work" })
  })

  it("lets fifty full-page rewrites through", () => {
    const text = "word ".repeat(50_000)
    const ops = Array.from({ length: maxPatchOperations }, (_, i) => ({
      op: "replace",
      oldString: i % 2 === 0 ? "word" : "mot",
      newString: i % 2 === 0 ? "mot" : "word",
      replaceAll: true
    }))
    expect(applied(text, ops)).toBe(text)
  })

  it("honours a smaller work budget", () => {
    expect(applyPatch("abc", decode([{ op: "append", text: "d" }]), { maxWork: 2 })).toMatchObject({ _tag: "TooLarge", limit: "work" })
    expect(maxPatchWork).toBeGreaterThan(maxPatchOperations * 4 * maxPageBodyBytes)
  })

  it("describes both limits", () => {
    expect(describeTooLarge({ index: 3, op: "replace", limit: "body" })).toMatch(/^patch\[3\] \(replace\) would make the page body 256 KB or more/)
    expect(describeTooLarge({ index: 0, op: "append", limit: "work" })).toMatch(/too much work/)
  })
})

describe("fitsPageBody", () => {
  it("the limit is 256 KB", () => {
    expect(maxPageBodyBytes).toBe(262144)
  })

  it("accepts 262143 bytes and refuses 262144", () => {
    expect(fitsPageBody("a".repeat(262143))).toBe(true)
    expect(fitsPageBody("a".repeat(262144))).toBe(false)
    expect(fitsPageBody("")).toBe(true)
  })

  it("counts UTF-8 bytes, not characters", () => {
    // "é" is 2 bytes, "€" is 3 bytes, "😀" is 4 bytes (2 UTF-16 units).
    expect(fitsPageBody("é".repeat(131071) + "a")).toBe(true) // 262143 bytes
    expect(fitsPageBody("é".repeat(131072))).toBe(false) // 262144 bytes
    expect(fitsPageBody("😀".repeat(65535) + "abc")).toBe(true) // 262143 bytes
    expect(fitsPageBody("😀".repeat(65536))).toBe(false) // 262144 bytes, only 131072 UTF-16 units
    expect(fitsPageBody("€".repeat(87381))).toBe(true) // 262143 bytes
    expect(fitsPageBody("€".repeat(87381) + "a")).toBe(false) // 262144 bytes
  })
})
