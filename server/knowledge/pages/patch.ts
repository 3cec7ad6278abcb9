/**
 * Page patches: the operation schemas of `PATCH /knowledgebases/{id}/pages/{pageId}` and a pure
 * `applyPatch` that either applies every operation or refuses the whole request.
 *
 * Anchors are matched with plain string search, never as patterns.
 */
import { Schema } from "effect"

/** Most operations one patch request may carry. */
export const maxPatchOperations = 50

/** A page body must be smaller than this many UTF-8 bytes (256 KB). */
export const maxPageBodyBytes = 256 * 1024

const strict = { parseOptions: { onExcessProperty: "error", errors: "all" } } as const

const Anchor = Schema.String.pipe(
  Schema.minLength(1, { message: () => "an anchor must not be empty" })
).annotations({ description: "Text that must appear exactly once in the page as it is at this step." })

/** Replaces `oldString` (exactly once) or, with `replaceAll: true`, every occurrence of it (at least one). */
export const ReplaceOperation = Schema.Struct({
  op: Schema.Literal("replace"),
  oldString: Anchor,
  newString: Schema.String,
  replaceAll: Schema.optional(Schema.Boolean)
}).annotations({
  ...strict,
  identifier: "ReplaceOperation",
  examples: [{ op: "replace", oldString: "Refunds take 5 days.", newString: "Refunds take 3 days." }]
})

/** Inserts `text` immediately before `anchor`. */
export const InsertBeforeOperation = Schema.Struct({
  op: Schema.Literal("insert_before"),
  anchor: Anchor,
  text: Schema.String
}).annotations({
  ...strict,
  identifier: "InsertBeforeOperation",
  examples: [{ op: "insert_before", anchor: "## Returns", text: "## Shipping\n\nWe ship worldwide.\n\n" }]
})

/** Inserts `text` immediately after `anchor`. */
export const InsertAfterOperation = Schema.Struct({
  op: Schema.Literal("insert_after"),
  anchor: Anchor,
  text: Schema.String
}).annotations({
  ...strict,
  identifier: "InsertAfterOperation",
  examples: [{ op: "insert_after", anchor: "## Returns\n", text: "\nReturns are free.\n" }]
})

/** Adds `text` at the very start of the page, verbatim (no newline is added). */
export const PrependOperation = Schema.Struct({
  op: Schema.Literal("prepend"),
  text: Schema.String
}).annotations({
  ...strict,
  identifier: "PrependOperation",
  examples: [{ op: "prepend", text: "> Reviewed in November.\n\n" }]
})

/** Adds `text` at the very end of the page, verbatim (no newline is added). */
export const AppendOperation = Schema.Struct({
  op: Schema.Literal("append"),
  text: Schema.String
}).annotations({
  ...strict,
  identifier: "AppendOperation",
  examples: [{ op: "append", text: "\n## Contact\n\nsupport@example.com\n" }]
})

/**
 * Replaces the range that starts where `from` starts (inclusive) and ends where `to` starts
 * (exclusive) with `text` (default empty, which deletes the range). `to` must start at or after
 * the end of `from`.
 */
export const ReplaceRangeOperation = Schema.Struct({
  op: Schema.Literal("replace_range"),
  from: Anchor,
  to: Anchor,
  text: Schema.optionalWith(Schema.String, { default: () => "" })
}).annotations({
  ...strict,
  identifier: "ReplaceRangeOperation",
  examples: [{ op: "replace_range", from: "## Old policy", to: "## Contact", text: "## Policy\n\nSee the FAQ.\n\n" }]
})

/** One patch operation, discriminated by `op`. */
export const PatchOperation = Schema.Union(
  ReplaceOperation,
  InsertBeforeOperation,
  InsertAfterOperation,
  PrependOperation,
  AppendOperation,
  ReplaceRangeOperation
).annotations({ identifier: "PatchOperation" })
export type PatchOperation = typeof PatchOperation.Type

/** The `patch` array: 1 to 50 operations, applied in order. */
export const PatchOperations = Schema.Array(PatchOperation).pipe(
  Schema.minItems(1, { message: () => "patch must hold at least one operation" }),
  Schema.maxItems(maxPatchOperations, {
    message: (issue) =>
      `patch holds ${Array.isArray(issue.actual) ? issue.actual.length : "too many"} operations; at most ${maxPatchOperations} are allowed per request`
  })
).annotations({
  identifier: "PatchOperations",
  examples: [[{ op: "replace", oldString: "5 days", newString: "3 days" }, { op: "append", text: "\nUpdated.\n" }]]
})
export type PatchOperations = typeof PatchOperations.Type

/**
 * Most work one patch request may do, in UTF-16 code units scanned, compared or written: enough for
 * 50 operations that each rewrite a full-size page a few times over, far below what a hostile patch
 * (self-overlapping anchors, doubling replacements) would cost unbounded.
 */
export const maxPatchWork = maxPatchOperations * 8 * maxPageBodyBytes

/** Every operation applied; `markdown` is the new page body. */
export interface PatchApplied {
  readonly _tag: "Applied"
  readonly markdown: string
}

/** The first operation that could not apply; nothing of the patch may be written. */
export interface PatchRefused {
  readonly _tag: "Refused"
  /** 0-based position of the operation in the `patch` array. */
  readonly index: number
  readonly op: string
  readonly reason: string
}

/**
 * The operation at `index` would make the body reach the size limit (`body`), or the patch exceeded
 * its work bound there (`work`); nothing of the patch may be written.
 */
export interface PatchTooLarge {
  readonly _tag: "TooLarge"
  readonly index: number
  readonly op: string
  readonly limit: "body" | "work"
}

/** Outcome of `applyPatch`. */
export type PatchResult = PatchApplied | PatchRefused | PatchTooLarge

/** The work left to a patch; spending past zero stops it. */
class WorkBudget {
  constructor(private remaining: number) {}
  /** Charges `units`; false once the budget is exhausted. */
  spend(units: number): boolean {
    this.remaining -= units
    return this.remaining >= 0
  }
}

const overBudget = "over budget" as const

/**
 * Start positions of every occurrence of `needle`, overlapping ones included, or `overBudget`
 * (each match is charged its length, so self-overlapping anchors cannot scan without bound).
 */
const occurrences = (haystack: string, needle: string, work: WorkBudget): Array<number> | typeof overBudget => {
  const found: Array<number> = []
  if (!work.spend(haystack.length)) return overBudget
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) {
    if (!work.spend(needle.length)) return overBudget
    found.push(at)
  }
  return found
}

/** The position of `needle` when it occurs exactly once, else why not. */
const locate = (haystack: string, needle: string, field: string, work: WorkBudget): number | string | typeof overBudget => {
  if (needle.length === 0) return `${field} is empty`
  const found = occurrences(haystack, needle, work)
  if (found === overBudget) return overBudget
  if (found.length === 0) return `${field} not found`
  if (found.length > 1) return `${field} appears ${found.length} times; make the anchor longer so it is unique`
  return found[0]!
}

/** Counts the non-overlapping occurrences of `needle`, left to right, or `overBudget`. */
const countDisjoint = (haystack: string, needle: string, work: WorkBudget): number | typeof overBudget => {
  if (!work.spend(haystack.length)) return overBudget
  let count = 0
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count++
  return count
}

/**
 * How one operation would change the body: the text to write once its length is known to fit, a
 * refusal reason, or `overBudget`.
 */
type Step = { readonly length: number; readonly build: () => string } | string | typeof overBudget

const splice = (text: string, from: number, to: number, insert: string): Step => ({
  length: text.length - (to - from) + insert.length,
  build: () => text.slice(0, from) + insert + text.slice(to)
})

/** Plans one operation without building its result. */
const planOne = (text: string, operation: PatchOperation, work: WorkBudget): Step => {
  switch (operation.op) {
    case "prepend":
      return splice(text, 0, 0, operation.text)
    case "append":
      return splice(text, text.length, text.length, operation.text)
    case "replace": {
      if (operation.replaceAll === true) {
        if (operation.oldString.length === 0) return "oldString is empty"
        const count = countDisjoint(text, operation.oldString, work)
        if (count === overBudget) return overBudget
        if (count === 0) return "oldString not found"
        const { oldString, newString } = operation
        return { length: text.length + count * (newString.length - oldString.length), build: () => text.split(oldString).join(newString) }
      }
      const at = locate(text, operation.oldString, "oldString", work)
      if (typeof at !== "number") return at
      return splice(text, at, at + operation.oldString.length, operation.newString)
    }
    case "insert_before":
    case "insert_after": {
      const at = locate(text, operation.anchor, "anchor", work)
      if (typeof at !== "number") return at
      const cut = operation.op === "insert_before" ? at : at + operation.anchor.length
      return splice(text, cut, cut, operation.text)
    }
    case "replace_range": {
      const from = locate(text, operation.from, "from", work)
      if (typeof from !== "number") return from
      const to = locate(text, operation.to, "to", work)
      if (typeof to !== "number") return to
      if (to < from) return "range misordered: to comes before from"
      if (to < from + operation.from.length) {
        return "range misordered: to overlaps from; it must start at or after the end of from"
      }
      return splice(text, from, to, operation.text)
    }
  }
}

/**
 * Applies `operations` in order, each against the result of the previous one.
 *
 * Every anchor (`oldString` of a `replace` without `replaceAll`, `anchor`, `from`, `to`) must occur
 * exactly once in the text as it is at that step; overlapping occurrences count. `replace` with
 * `replaceAll: true` needs at least one occurrence and replaces every non-overlapping occurrence,
 * left to right. `prepend` and `append` add their text verbatim, without an implicit newline.
 *
 * The first operation that cannot apply refuses the whole patch: the result then carries no
 * markdown, so a caller has nothing partial to write. The body must stay under `maxBytes` UTF-8
 * bytes (default 256 KB) after every operation: an operation whose result would reach it is
 * refused as `TooLarge` before that result is built (its length is known first, and a UTF-8 body is
 * never shorter in bytes than in UTF-16 units), and so is a patch that exceeds {@link maxPatchWork}.
 */
export const applyPatch = (
  markdown: string,
  operations: ReadonlyArray<PatchOperation>,
  limits: { readonly maxBytes?: number; readonly maxWork?: number } = {}
): PatchResult => {
  const maxBytes = limits.maxBytes ?? maxPageBodyBytes
  const work = new WorkBudget(limits.maxWork ?? maxPatchWork)
  let text = markdown
  for (const [index, operation] of operations.entries()) {
    const tooLarge = (limit: PatchTooLarge["limit"]): PatchTooLarge => ({ _tag: "TooLarge", index, op: operation.op, limit })
    const step = planOne(text, operation, work)
    if (step === overBudget) return tooLarge("work")
    if (typeof step === "string") return { _tag: "Refused", index, op: operation.op, reason: step }
    if (step.length >= maxBytes) return tooLarge("body")
    if (!work.spend(2 * step.length)) return tooLarge("work")
    text = step.build()
    if (Buffer.byteLength(text, "utf8") >= maxBytes) return tooLarge("body")
  }
  return { _tag: "Applied", markdown: text }
}

/** A refusal as one human sentence, e.g. `patch[2] (insert_after): anchor not found`. */
export const describeRefusal = (refusal: Omit<PatchRefused, "_tag">): string =>
  `patch[${refusal.index}] (${refusal.op}): ${refusal.reason}`

/** A size refusal as one human sentence, naming the operation that reached the limit. */
export const describeTooLarge = (refusal: Omit<PatchTooLarge, "_tag">): string =>
  refusal.limit === "body"
    ? `patch[${refusal.index}] (${refusal.op}) would make the page body ${maxPageBodyBytes / 1024} KB or more; a page body must be under ${maxPageBodyBytes / 1024} KB.`
    : `patch[${refusal.index}] (${refusal.op}): the patch does too much work for one request; send smaller operations or longer anchors.`

/** True when `markdown` fits a page body: under 256 KB (fewer than 262144 UTF-8 bytes). */
export const fitsPageBody = (markdown: string): boolean => Buffer.byteLength(markdown, "utf8") < maxPageBodyBytes
