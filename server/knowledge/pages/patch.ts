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

/** Outcome of `applyPatch`. */
export type PatchResult = PatchApplied | PatchRefused

/** Start positions of every occurrence of `needle`, overlapping ones included. */
const occurrences = (haystack: string, needle: string): Array<number> => {
  const found: Array<number> = []
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) found.push(at)
  return found
}

/** The position of `needle` when it occurs exactly once, else why not. */
const locate = (haystack: string, needle: string, field: string): number | string => {
  if (needle.length === 0) return `${field} is empty`
  const found = occurrences(haystack, needle)
  if (found.length === 0) return `${field} not found`
  if (found.length > 1) return `${field} appears ${found.length} times; make the anchor longer so it is unique`
  return found[0]!
}

/** Applies one operation; a string result is the refusal reason. */
const applyOne = (text: string, operation: PatchOperation): { readonly markdown: string } | string => {
  switch (operation.op) {
    case "prepend":
      return { markdown: operation.text + text }
    case "append":
      return { markdown: text + operation.text }
    case "replace": {
      if (operation.replaceAll === true) {
        if (operation.oldString.length === 0) return "oldString is empty"
        const parts = text.split(operation.oldString)
        if (parts.length === 1) return "oldString not found"
        return { markdown: parts.join(operation.newString) }
      }
      const at = locate(text, operation.oldString, "oldString")
      if (typeof at === "string") return at
      return { markdown: text.slice(0, at) + operation.newString + text.slice(at + operation.oldString.length) }
    }
    case "insert_before":
    case "insert_after": {
      const at = locate(text, operation.anchor, "anchor")
      if (typeof at === "string") return at
      const cut = operation.op === "insert_before" ? at : at + operation.anchor.length
      return { markdown: text.slice(0, cut) + operation.text + text.slice(cut) }
    }
    case "replace_range": {
      const from = locate(text, operation.from, "from")
      if (typeof from === "string") return from
      const to = locate(text, operation.to, "to")
      if (typeof to === "string") return to
      if (to < from) return "range misordered: to comes before from"
      if (to < from + operation.from.length) {
        return "range misordered: to overlaps from; it must start at or after the end of from"
      }
      return { markdown: text.slice(0, from) + operation.text + text.slice(to) }
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
 * markdown, so a caller has nothing partial to write. The size of the result is not checked here;
 * see `fitsPageBody`.
 */
export const applyPatch = (markdown: string, operations: ReadonlyArray<PatchOperation>): PatchResult => {
  let text = markdown
  for (const [index, operation] of operations.entries()) {
    const outcome = applyOne(text, operation)
    if (typeof outcome === "string") return { _tag: "Refused", index, op: operation.op, reason: outcome }
    text = outcome.markdown
  }
  return { _tag: "Applied", markdown: text }
}

/** A refusal as one human sentence, e.g. `patch[2] (insert_after): anchor not found`. */
export const describeRefusal = (refusal: Omit<PatchRefused, "_tag">): string =>
  `patch[${refusal.index}] (${refusal.op}): ${refusal.reason}`

/** True when `markdown` fits a page body: under 256 KB (fewer than 262144 UTF-8 bytes). */
export const fitsPageBody = (markdown: string): boolean => Buffer.byteLength(markdown, "utf8") < maxPageBodyBytes
