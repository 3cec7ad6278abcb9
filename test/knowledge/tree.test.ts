/**
 * The page index builder (server/knowledge/pages/tree.ts): tree order over mixed folders and pages,
 * depth limits with `collapsed` and counts, parents by id or exact folder title, the top level,
 * `updatedSince`, paths, subtrees, paging with stale positions, orphans and cycles, and 10,000 rows.
 */
import { describe, expect, expectTypeOf, it } from "vitest"
import type { PageIndexItem } from "../../server/knowledge/knowledgebases/domain.js"
import {
  buildIndex,
  type IndexItem,
  type IndexPosition,
  type ItemsPage,
  maxIndexDepth,
  pageForest,
  pageOfItems,
  type PageRow,
  resolveParent,
  subtreeIds
} from "../../server/knowledge/pages/tree.js"

// ---------------------------------------------------------------------------------------------------
// Fixtures

let clock = 0
/** A row; `createdAt` increases with every call unless given. */
const row = (
  id: string,
  parentPageId: string | null,
  title: string,
  extra: Partial<Omit<PageRow, "id" | "parentPageId" | "title">> = {}
): PageRow => {
  clock += 1
  const at = new Date(Date.UTC(2026, 0, 1) + clock * 60_000).toISOString()
  return {
    id,
    parentPageId,
    title,
    description: `About ${title}`,
    templateKey: "page",
    updatedAt: at,
    createdAt: at,
    hook: `hook-${id}`,
    ...extra
  }
}
const folder = (id: string, parentPageId: string | null, title: string, extra: Partial<PageRow> = {}): PageRow =>
  row(id, parentPageId, title, { templateKey: "folder", ...extra })

/**
 * guides/            (folder)
 *   refunds          (page)
 *     edge-cases     (page)
 *   billing/         (folder)
 *     invoices       (page)
 *     taxes          (meeting_notes)
 *   empty/           (folder, no children)
 * welcome            (page)
 * archive/           (folder)
 *   guides2/         (folder titled "Guides" too)
 *     old-guide      (page)
 *   old              (page)
 */
const sample = (): Array<PageRow> => {
  const rows = [
    folder("guides", null, "Guides"),
    row("refunds", "guides", "Refunds"),
    row("edge-cases", "refunds", "Refund edge cases"),
    folder("billing", "guides", "Billing"),
    row("invoices", "billing", "Invoices"),
    row("taxes", "billing", "Taxes", { templateKey: "meeting_notes" }),
    folder("empty", "guides", "Empty"),
    row("welcome", null, "Welcome"),
    folder("archive", null, "Archive"),
    folder("guides2", "archive", "Guides"),
    row("old-guide", "guides2", "Old guide"),
    row("old", "archive", "Old")
  ]
  // Any input order: reverse, then swap pairs.
  const shuffled = [...rows].reverse()
  for (let i = 0; i + 1 < shuffled.length; i += 2) [shuffled[i], shuffled[i + 1]] = [shuffled[i + 1]!, shuffled[i]!]
  return shuffled
}

const treeOrder = [
  "guides",
  "refunds",
  "edge-cases",
  "billing",
  "invoices",
  "taxes",
  "empty",
  "welcome",
  "archive",
  "guides2",
  "old-guide",
  "old"
]

const ids = (items: ReadonlyArray<{ readonly id: string }>): Array<string> => items.map((item) => item.id)
const byId = (items: ReadonlyArray<IndexItem>): Map<string, IndexItem> => new Map(items.map((item) => [item.id, item]))
const get = (items: ReadonlyArray<IndexItem>, id: string): IndexItem => {
  const item = byId(items).get(id)
  if (item === undefined) throw new Error(`no item ${id}`)
  return item
}

// ---------------------------------------------------------------------------------------------------

describe("buildIndex: the whole tree", () => {
  it("lists every row in tree order (pre-order, siblings by createdAt then id), whatever the input order", () => {
    const { parent, items } = buildIndex(sample(), { parent: { kind: "all" } })
    expect(parent).toBeNull()
    expect(ids(items)).toEqual(treeOrder)
  })

  it("answers exactly the fields of a Page index item", () => {
    const { items } = buildIndex(sample(), { parent: { kind: "all" } })
    const refunds = get(items, "refunds")
    expect(refunds).toEqual({
      id: "refunds",
      title: "Refunds",
      description: "About Refunds",
      templateKey: "page",
      parentPageId: "guides",
      updatedAt: refunds.updatedAt,
      hook: "hook-refunds",
      isFolder: false,
      path: ["Guides"],
      depth: 2,
      childCount: 1,
      pageCount: 1,
      collapsed: false
    })
    expect(Object.keys(refunds).sort()).toEqual(
      [
        "id",
        "title",
        "description",
        "templateKey",
        "parentPageId",
        "updatedAt",
        "hook",
        "isFolder",
        "path",
        "depth",
        "childCount",
        "pageCount",
        "collapsed"
      ].sort()
    )
    expectTypeOf<IndexItem>().toExtend<PageIndexItem>()
  })

  it("orders siblings by createdAt as instants, then by id on ties", () => {
    const rows: Array<PageRow> = [
      row("b", null, "B", { createdAt: "2026-01-01T10:00:00.000Z" }),
      row("a", null, "A", { createdAt: "2026-01-01T10:00:00.000Z" }),
      // 09:30 UTC, written with an offset: earlier than 10:00Z although its text sorts later.
      row("c", null, "C", { createdAt: "2026-01-01T11:30:00+02:00" }),
      row("d", null, "D", { createdAt: "2025-12-31T23:59:59.999Z" })
    ]
    expect(ids(buildIndex(rows, { parent: { kind: "all" } }).items)).toEqual(["d", "c", "a", "b"])
  })

  it("puts siblings with an unreadable createdAt last, by id", () => {
    const rows: Array<PageRow> = [
      row("z", null, "Z", { createdAt: "not a date" }),
      row("y", null, "Y", { createdAt: "2026-13-01T00:00:00.000Z" }),
      row("x", null, "X", { createdAt: "2030-01-01T00:00:00.000Z" })
    ]
    expect(ids(buildIndex(rows, { parent: { kind: "all" } }).items)).toEqual(["x", "y", "z"])
  })

  it("marks folders, keeps template keys, and gives depth 1 at the top", () => {
    const { items } = buildIndex(sample(), { parent: { kind: "all" } })
    expect(get(items, "guides")).toMatchObject({ isFolder: true, templateKey: "folder", depth: 1, parentPageId: null })
    expect(get(items, "taxes")).toMatchObject({ isFolder: false, templateKey: "meeting_notes", depth: 3 })
    expect(get(items, "welcome")).toMatchObject({ isFolder: false, depth: 1, path: [] })
    expect(items.map((item) => item.depth)).toEqual([1, 2, 3, 2, 3, 3, 2, 1, 1, 2, 3, 2])
    expect(items.every((item) => !item.collapsed)).toBe(true)
  })

  it("counts direct children and the non-folder pages of the whole subtree", () => {
    const items = byId(buildIndex(sample(), { parent: { kind: "all" } }).items)
    const counts = Object.fromEntries([...items].map(([id, item]) => [id, [item.childCount, item.pageCount]]))
    expect(counts).toEqual({
      guides: [3, 4], // refunds, edge-cases, invoices, taxes
      refunds: [1, 1],
      "edge-cases": [0, 0],
      billing: [2, 2],
      invoices: [0, 0],
      taxes: [0, 0],
      empty: [0, 0],
      welcome: [0, 0],
      archive: [2, 2], // old-guide, old (the folder guides2 is not a page)
      guides2: [1, 1],
      "old-guide": [0, 0],
      old: [0, 0]
    })
  })

  it("gives as path the titles of all ancestors from the top (pages included), not the item's own", () => {
    const items = byId(buildIndex(sample(), { parent: { kind: "all" } }).items)
    expect(items.get("guides")?.path).toEqual([])
    expect(items.get("billing")?.path).toEqual(["Guides"])
    expect(items.get("invoices")?.path).toEqual(["Guides", "Billing"])
    // Under a page: the page's title is part of the path.
    expect(items.get("edge-cases")?.path).toEqual(["Guides", "Refunds"])
    expect(items.get("old-guide")?.path).toEqual(["Archive", "Guides"])
  })

  it("answers an empty index for no rows", () => {
    expect(buildIndex([], { parent: { kind: "all" } })).toEqual({ parent: null, items: [] })
    expect(buildIndex([], { parent: { kind: "top" } })).toEqual({ parent: null, items: [] })
  })

  it("gives every item its own path array", () => {
    const { items } = buildIndex(sample(), { parent: { kind: "all" } })
    const invoices = get(items, "invoices")
    const taxes = get(items, "taxes")
    expect(invoices.path).not.toBe(taxes.path)
  })
})

describe("buildIndex: depth limits", () => {
  it("depth 1 lists the top level, collapsing items with children, counts still given", () => {
    const { items } = buildIndex(sample(), { parent: { kind: "all" }, depth: 1 })
    expect(ids(items)).toEqual(["guides", "welcome", "archive"])
    expect(items.map((item) => [item.id, item.collapsed, item.childCount, item.pageCount])).toEqual([
      ["guides", true, 3, 4],
      ["welcome", false, 0, 0],
      ["archive", true, 2, 2]
    ])
  })

  it("depth 2 collapses only the items at depth 2 that have children", () => {
    const { items } = buildIndex(sample(), { parent: { kind: "all" }, depth: 2 })
    expect(ids(items)).toEqual(["guides", "refunds", "billing", "empty", "welcome", "archive", "guides2", "old"])
    const collapsed = items.filter((item) => item.collapsed).map((item) => item.id)
    expect(collapsed).toEqual(["refunds", "billing", "guides2"]) // a page with children collapses too; "empty" does not
    expect(get(items, "billing")).toMatchObject({ childCount: 2, pageCount: 2, depth: 2 })
  })

  it("a depth deeper than the tree lists everything, nothing collapsed", () => {
    const { items } = buildIndex(sample(), { parent: { kind: "all" }, depth: maxIndexDepth })
    expect(ids(items)).toEqual(treeOrder)
    expect(items.some((item) => item.collapsed)).toBe(false)
  })

  it("refuses a depth outside 1..20 or not whole", () => {
    for (const depth of [0, -1, 21, 1.5, Number.NaN]) {
      expect(() => buildIndex(sample(), { parent: { kind: "all" }, depth })).toThrow(RangeError)
    }
  })
})

describe("buildIndex: the top level", () => {
  it("lists only the top level by default, collapsed where there is more", () => {
    const { parent, items } = buildIndex(sample(), { parent: { kind: "top" } })
    expect(parent).toBeNull()
    expect(ids(items)).toEqual(["guides", "welcome", "archive"])
    expect(items.map((item) => item.collapsed)).toEqual([true, false, true])
  })

  it("goes deeper when a depth is given", () => {
    const { items } = buildIndex(sample(), { parent: { kind: "top" }, depth: 2 })
    expect(ids(items)).toEqual(["guides", "refunds", "billing", "empty", "welcome", "archive", "guides2", "old"])
  })
})

describe("buildIndex: below a parent", () => {
  it("lists a folder's whole subtree by default, depth relative to the parent, true paths", () => {
    const { parent, items } = buildIndex(sample(), { parent: { kind: "page", id: "guides" } })
    expect(parent).toEqual({ id: "guides", title: "Guides", description: "About Guides", isFolder: true })
    expect(ids(items)).toEqual(["refunds", "edge-cases", "billing", "invoices", "taxes", "empty"])
    expect(items.map((item) => item.depth)).toEqual([1, 2, 1, 2, 2, 1])
    expect(get(items, "invoices").path).toEqual(["Guides", "Billing"])
    expect(items.some((item) => item.collapsed)).toBe(false)
  })

  it("depth 1 lists the direct children only", () => {
    const { items } = buildIndex(sample(), { parent: { kind: "page", id: "guides" }, depth: 1 })
    expect(ids(items)).toEqual(["refunds", "billing", "empty"])
    expect(items.map((item) => [item.id, item.collapsed])).toEqual([
      ["refunds", true],
      ["billing", true],
      ["empty", false]
    ])
  })

  it("a nested parent keeps the path from the top", () => {
    const { parent, items } = buildIndex(sample(), { parent: { kind: "page", id: "billing" } })
    expect(parent).toMatchObject({ id: "billing", isFolder: true })
    expect(items.map((item) => [item.id, item.depth, item.path])).toEqual([
      ["invoices", 1, ["Guides", "Billing"]],
      ["taxes", 1, ["Guides", "Billing"]]
    ])
  })

  it("a page can be the parent", () => {
    const { parent, items } = buildIndex(sample(), { parent: { kind: "page", id: "refunds" } })
    expect(parent).toEqual({ id: "refunds", title: "Refunds", description: "About Refunds", isFolder: false })
    expect(ids(items)).toEqual(["edge-cases"])
    expect(get(items, "edge-cases").path).toEqual(["Guides", "Refunds"])
  })

  it("a parent without children lists nothing", () => {
    expect(buildIndex(sample(), { parent: { kind: "page", id: "empty" } }).items).toEqual([])
  })

  it("throws for a parent id that is not among the rows", () => {
    expect(() => buildIndex(sample(), { parent: { kind: "page", id: "nope" } })).toThrow(/not in this Knowledgebase/)
  })
})

describe("buildIndex: updatedSince", () => {
  const recent = "2027-03-01T00:00:00.000Z"
  const touched = (rows: Array<PageRow>, touchedIds: ReadonlyArray<string>): Array<PageRow> =>
    rows.map((r) => (touchedIds.includes(r.id) ? { ...r, updatedAt: recent } : r))

  it("keeps only items updated at or after it, in tree order, with their real depth, path and counts", () => {
    const rows = touched(sample(), ["old", "invoices", "welcome", "edge-cases"])
    const { items } = buildIndex(rows, { parent: { kind: "all" }, updatedSince: recent })
    expect(ids(items)).toEqual(["edge-cases", "invoices", "welcome", "old"])
    expect(items.map((item) => [item.id, item.depth, item.path])).toEqual([
      ["edge-cases", 3, ["Guides", "Refunds"]],
      ["invoices", 3, ["Guides", "Billing"]],
      ["welcome", 1, []],
      ["old", 2, ["Archive"]]
    ])
  })

  it("is inclusive and compares instants, not text", () => {
    const rows = touched(sample(), ["invoices"])
    expect(ids(buildIndex(rows, { parent: { kind: "all" }, updatedSince: "2027-03-01T02:00:00+02:00" }).items)).toEqual([
      "invoices"
    ])
    expect(buildIndex(rows, { parent: { kind: "all" }, updatedSince: "2027-03-01T00:00:00.001Z" }).items).toEqual([])
  })

  it("applies after the depth limit, keeping collapsed flags and counts of the full tree", () => {
    const rows = touched(sample(), ["guides", "invoices"])
    const { items } = buildIndex(rows, { parent: { kind: "all" }, depth: 1, updatedSince: recent })
    expect(items.map((item) => [item.id, item.collapsed, item.childCount, item.pageCount])).toEqual([["guides", true, 3, 4]])
  })

  it("combines with a parent", () => {
    const rows = touched(sample(), ["old-guide", "invoices"])
    const { items } = buildIndex(rows, { parent: { kind: "page", id: "archive" }, updatedSince: recent })
    expect(items.map((item) => [item.id, item.depth, item.path])).toEqual([["old-guide", 2, ["Archive", "Guides"]]])
  })

  it("refuses an unreadable date", () => {
    expect(() => buildIndex(sample(), { parent: { kind: "all" }, updatedSince: "yesterday" })).toThrow(RangeError)
  })
})

describe("resolveParent", () => {
  it("finds a page or a folder by id", () => {
    expect(resolveParent(sample(), "billing")).toEqual({ kind: "page", id: "billing" })
    expect(resolveParent(sample(), "refunds")).toEqual({ kind: "page", id: "refunds" })
  })

  it("finds a folder by its exact title", () => {
    expect(resolveParent(sample(), "Billing")).toEqual({ kind: "page", id: "billing" })
    expect(resolveParent(sample(), "Archive")).toEqual({ kind: "page", id: "archive" })
  })

  it("titles are exact and case-sensitive, and only folders are found by title", () => {
    expect(resolveParent(sample(), "billing ")).toEqual({ kind: "not_found" })
    expect(resolveParent(sample(), "BILLING")).toEqual({ kind: "not_found" })
    expect(resolveParent(sample(), "Bill")).toEqual({ kind: "not_found" })
    expect(resolveParent(sample(), "Refunds")).toEqual({ kind: "not_found" }) // a page, not a folder
    expect(resolveParent(sample(), "")).toEqual({ kind: "not_found" })
  })

  it("two folders with the same title are ambiguous, ids in tree order", () => {
    expect(resolveParent(sample(), "Guides")).toEqual({ kind: "ambiguous", ids: ["guides", "guides2"] })
  })

  it("an id wins over a folder title", () => {
    const rows = [...sample(), folder("f-x", null, "welcome")]
    expect(resolveParent(rows, "welcome")).toEqual({ kind: "page", id: "welcome" })
  })

  it("a UUID in another case names its page", () => {
    const id = "3f0a3a5e-8d4b-4b8e-9c59-2a8e0f7d1c11"
    const rows = [...sample(), folder(id, null, "Handbook")]
    expect(resolveParent(rows, id.toUpperCase())).toEqual({ kind: "page", id })
  })

  it("accepts a prebuilt forest", () => {
    const forest = pageForest(sample())
    expect(resolveParent(forest, "Billing")).toEqual({ kind: "page", id: "billing" })
    expect(ids(buildIndex(forest, { parent: { kind: "page", id: "billing" } }).items)).toEqual(["invoices", "taxes"])
  })
})

describe("subtreeIds", () => {
  it("answers the id and all its descendants in tree order", () => {
    expect(subtreeIds(sample(), "guides")).toEqual(["guides", "refunds", "edge-cases", "billing", "invoices", "taxes", "empty"])
    expect(subtreeIds(sample(), "refunds")).toEqual(["refunds", "edge-cases"])
    expect(subtreeIds(sample(), "welcome")).toEqual(["welcome"])
  })

  it("answers nothing for an unknown id", () => {
    expect(subtreeIds(sample(), "nope")).toEqual([])
  })

  it("tells a move inside a page's own sub-pages", () => {
    const inside = (page: string, target: string): boolean => subtreeIds(sample(), page).includes(target)
    expect(inside("guides", "invoices")).toBe(true)
    expect(inside("guides", "guides")).toBe(true)
    expect(inside("billing", "guides")).toBe(false)
    expect(inside("archive", "invoices")).toBe(false)
  })
})

describe("pageOfItems", () => {
  const items = buildIndex(sample(), { parent: { kind: "all" } }).items

  it("walks the items page by page, every item once, in order", () => {
    const seen: Array<string> = []
    let after: IndexPosition | null = null
    let pages = 0
    for (;;) {
      const page: ItemsPage<IndexItem> = pageOfItems(items, { limit: 5, after })
      if (page.stale) throw new Error("stale")
      seen.push(...ids(page.items))
      pages += 1
      if (page.next === null) break
      after = page.next
    }
    expect(seen).toEqual(treeOrder)
    expect(pages).toBe(3)
  })

  it("the position names where the next page starts and the last item served", () => {
    const first = pageOfItems(items, { limit: 4, after: null })
    expect(first).toEqual({ stale: false, items: items.slice(0, 4), next: { index: 4, id: "billing" } })
  })

  it("the last page has no next, also when it ends exactly at the end", () => {
    expect(pageOfItems(items, { limit: 12, after: null }).next).toBeNull()
    expect(pageOfItems(items, { limit: 200, after: null }).next).toBeNull()
    const rest = pageOfItems(items, { limit: 6, after: { index: 6, id: "taxes" } })
    expect(rest).toEqual({ stale: false, items: items.slice(6), next: null })
  })

  it("an empty list is one empty page", () => {
    expect(pageOfItems([], { limit: 50, after: null })).toEqual({ stale: false, items: [], next: null })
  })

  it("a position whose item moved is stale", () => {
    const { next } = pageOfItems(items, { limit: 4, after: null })
    if (next === null) throw new Error("expected more")
    // A page created in front of the position shifts everything: the item before index changes.
    const grown = buildIndex([...sample(), row("new", "guides", "New", { createdAt: "2020-01-01T00:00:00.000Z" })], {
      parent: { kind: "all" }
    }).items
    expect(pageOfItems(grown, { limit: 4, after: next })).toEqual({ stale: true, items: [], next: null })
    // Unchanged list: fine.
    expect(pageOfItems(items, { limit: 4, after: next }).stale).toBe(false)
  })

  it("a position out of range or malformed is stale", () => {
    for (const after of [
      { index: 0, id: "guides" },
      { index: 13, id: "old" },
      { index: 2.5, id: "refunds" },
      { index: 2, id: "guides" }
    ]) {
      expect(pageOfItems(items, { limit: 4, after }).stale).toBe(true)
    }
  })

  it("refuses a limit that is not a positive whole number", () => {
    for (const limit of [0, -3, 1.5]) expect(() => pageOfItems(items, { limit, after: null })).toThrow(RangeError)
  })
})

describe("defensive shape", () => {
  it("a row whose parent is missing is top level", () => {
    const rows = [...sample(), row("orphan", "gone", "Orphan")]
    const { items } = buildIndex(rows, { parent: { kind: "all" } })
    expect(ids(items).at(-1)).toBe("orphan")
    expect(get(items, "orphan")).toMatchObject({ depth: 1, path: [], parentPageId: null })
    expect(buildIndex(rows, { parent: { kind: "top" } }).items.map((item) => item.id)).toContain("orphan")
  })

  it("a row that is its own parent is top level", () => {
    const { items } = buildIndex([row("self", "self", "Self")], { parent: { kind: "all" } })
    expect(items).toMatchObject([{ id: "self", depth: 1, parentPageId: null, childCount: 0 }])
  })

  it("a cycle does not hang: broken at its first member in sibling order, every row listed once", () => {
    // a -> b -> c -> a, plus d under c and an unrelated top-level page.
    const rows = [
      row("top", null, "Top"),
      row("a", "c", "A"),
      row("b", "a", "B"),
      row("c", "b", "C"),
      row("d", "c", "D")
    ]
    for (const input of [rows, [...rows].reverse()]) {
      const { items } = buildIndex(input, { parent: { kind: "all" } })
      expect(items.map((item) => [item.id, item.depth, item.parentPageId, item.path])).toEqual([
        ["top", 1, null, []],
        ["a", 1, null, []],
        ["b", 2, "a", ["A"]],
        ["c", 3, "b", ["A", "B"]],
        ["d", 4, "c", ["A", "B", "C"]]
      ])
      expect(get(items, "a")).toMatchObject({ childCount: 1, pageCount: 3 })
      expect(subtreeIds(input, "a")).toEqual(["a", "b", "c", "d"])
      expect(subtreeIds(input, "c")).toEqual(["c", "d"])
    }
  })

  it("a cycle hanging below a chain is broken too", () => {
    // x -> y -> z -> y: y and z form a cycle; x is under y.
    const rows = [row("y", "z", "Y"), row("z", "y", "Z"), row("x", "y", "X")]
    const { items } = buildIndex(rows, { parent: { kind: "all" } })
    expect(items.map((item) => [item.id, item.depth])).toEqual([
      ["y", 1],
      ["z", 2],
      ["x", 2]
    ])
    // Sibling order under y: z was created before x.
  })

  it("a repeated id keeps its first row", () => {
    const rows = [row("p", null, "First"), row("p", null, "Second")]
    expect(buildIndex(rows, { parent: { kind: "all" } }).items.map((item) => item.title)).toEqual(["First"])
  })

  it("a very deep chain does not overflow the stack", () => {
    const rows: Array<PageRow> = []
    for (let i = 0; i < 5_000; i++) rows.push(row(`n${i}`, i === 0 ? null : `n${i - 1}`, `N${i}`))
    const forest = pageForest(rows)
    const { items } = buildIndex(forest, { parent: { kind: "all" }, depth: 20 })
    expect(items).toHaveLength(20)
    expect(items[19]).toMatchObject({ id: "n19", collapsed: true, childCount: 1, pageCount: 4_980 })
    expect(subtreeIds(forest, "n4990")).toHaveLength(10)
  })
})

describe("10,000 rows", () => {
  it("builds the index of 10,000 rows in nested folders with the right counts", () => {
    // 10 top folders × 10 sub-folders × 10 sub-sub-folders × (1 folder holding 8 pages) = 10 + 100 + 1000
    // + 1000 + 8000 = 10,110 rows; depth 5; then shuffled.
    const rows: Array<PageRow> = []
    const t0 = Date.UTC(2026, 0, 1)
    let n = 0
    const add = (id: string, parent: string | null, templateKey: string): void => {
      const at = new Date(t0 + n++ * 1000).toISOString()
      rows.push({ id, parentPageId: parent, title: `T ${id}`, description: "", templateKey, updatedAt: at, createdAt: at, hook: "" })
    }
    for (let a = 0; a < 10; a++) {
      add(`a${a}`, null, "folder")
      for (let b = 0; b < 10; b++) {
        add(`a${a}b${b}`, `a${a}`, "folder")
        for (let c = 0; c < 10; c++) {
          add(`a${a}b${b}c${c}`, `a${a}b${b}`, "folder")
          add(`a${a}b${b}c${c}d`, `a${a}b${b}c${c}`, "folder")
          for (let e = 0; e < 8; e++) add(`a${a}b${b}c${c}d${e}`, `a${a}b${b}c${c}d`, "page")
        }
      }
    }
    expect(rows.length).toBe(10_110)
    // Deterministic shuffle.
    let seed = 42
    for (let i = rows.length - 1; i > 0; i--) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      const j = seed % (i + 1)
      ;[rows[i], rows[j]] = [rows[j]!, rows[i]!]
    }

    const { items } = buildIndex(rows, { parent: { kind: "all" } })
    expect(items).toHaveLength(10_110)
    expect(items.map((item) => item.depth).reduce((max, d) => Math.max(max, d), 0)).toBe(5)
    expect(items[0]).toMatchObject({ id: "a0", depth: 1, childCount: 10, pageCount: 800 })
    expect(items[1]).toMatchObject({ id: "a0b0", depth: 2, childCount: 10, pageCount: 80, path: ["T a0"] })
    expect(items[2]).toMatchObject({ id: "a0b0c0", depth: 3, childCount: 1, pageCount: 8 })
    expect(items[3]).toMatchObject({ id: "a0b0c0d", depth: 4, childCount: 8, pageCount: 8 })
    expect(items[4]).toMatchObject({
      id: "a0b0c0d0",
      depth: 5,
      childCount: 0,
      pageCount: 0,
      path: ["T a0", "T a0b0", "T a0b0c0", "T a0b0c0d"]
    })
    expect(items.at(-1)?.id).toBe("a9b9c9d7")
    expect(items.filter((item) => !item.isFolder)).toHaveLength(8_000)
    // Every parent comes before its children.
    const seen = new Set<string>()
    for (const item of items) {
      if (item.parentPageId !== null) expect(seen.has(item.parentPageId)).toBe(true)
      seen.add(item.id)
    }

    const top = buildIndex(rows, { parent: { kind: "top" } }).items
    expect(top.map((item) => [item.childCount, item.pageCount, item.collapsed])).toEqual(
      Array.from({ length: 10 }, () => [10, 800, true])
    )
    const shallow = buildIndex(rows, { parent: { kind: "page", id: "a3" }, depth: 2 }).items
    expect(shallow).toHaveLength(110)
    expect(shallow.filter((item) => item.collapsed)).toHaveLength(100)
    expect(subtreeIds(rows, "a5b5")).toHaveLength(1 + 10 + 10 + 80)
    expect(resolveParent(rows, "T a7b2c4d")).toEqual({ kind: "page", id: "a7b2c4d" })

    // Paging all of it at 200 a page.
    let after: IndexPosition | null = null
    let count = 0
    for (;;) {
      const page: ItemsPage<IndexItem> = pageOfItems(items, { limit: 200, after })
      if (page.stale) throw new Error("stale")
      count += page.items.length
      if (page.next === null) break
      after = page.next
    }
    expect(count).toBe(10_110)
  })
})
