/**
 * The page index of one Knowledgebase (`GET /knowledgebases/{id}/pages`, and the `pages` of the
 * detail read), built from the flat rows of its live pages and folders. Pure: no SQL, no HTTP, no
 * Effect; linear in the number of rows apart from one sort (10,000 rows: about 4 ms to arrange,
 * under 1 ms more per listing; build a {@link pageForest} once to serve several calls).
 *
 * Decisions (the spec leaves these open or is terse):
 *
 * - **Sibling order** is `createdAt` then `id`, ascending (instants compared as instants, so
 *   `…Z` and `…+02:00` order correctly; ids by code unit). The index is in **tree order**:
 *   depth-first pre-order, every parent before its children.
 * - **`path`** holds the titles of **all** ancestors from the top of the Knowledgebase, nearest
 *   last, whatever the listing root: a page can be the parent of other pages, so a page that is a
 *   parent is a "folder" of the path just as it is a directory in the export archive. A top-level
 *   item has `path: []`. The item's own title is not part of its path.
 * - **`depth`** is relative to the listing root: with no parent (whole tree, or the top level) a
 *   top-level item has depth 1; with a parent page, its direct children have depth 1. So `depth`
 *   matches the `depth` query parameter: `depth=1` lists exactly the items of depth 1.
 * - **`depth` option**: absent means unlimited for the whole tree and for a parent page (its whole
 *   subtree); for the **top level** (`parentPageId=null`, as opposed to omitting it) absent means
 *   1, since "null for top level" and "omit for the whole tree" must differ. Given, it must be a
 *   whole number from 1 to 20 (else `RangeError`; the caller validates first).
 * - **`childCount`** counts direct children (folders and pages); **`pageCount`** counts the
 *   non-folder pages of the whole subtree, excluding the item itself. Both always describe the
 *   full tree, whatever the depth or `updatedSince`.
 * - **`collapsed`** is true when an item has children that lie beyond the requested depth (it
 *   sits at the depth limit and `childCount > 0`); its counts are still given.
 * - **`updatedSince`** (inclusive, compared as instants) only filters the listed items: the kept
 *   items stay in tree order with their real `depth`, `path` and counts; an ancestor that was not
 *   updated is simply not listed. Depth limiting applies first (an updated item beyond the depth
 *   is not listed).
 * - **Defensive shape**: a row whose parent is not among the rows, or is itself, counts as top
 *   level. A parent cycle (which the writes never create) is broken at one deterministic edge: the
 *   cycle's first member in sibling order becomes top level; so nothing hangs and every row is
 *   listed exactly once. A repeated id keeps its first row. An item's `parentPageId` is the parent
 *   it is listed under (null for such a row), so `parentPageId`, `depth` and `path` always agree.
 * - **Parent resolution** (`resolveParent`): an id of any page or folder wins (a UUID in another
 *   case matches its lower-case id); otherwise the value must be the exact (case-sensitive) title
 *   of a folder; two or more folders with that title are ambiguous (ids in tree order). Pages are
 *   reached by id only.
 * - **Paging** (`pageOfItems`): a position is `{ index, id }`: `index` is where the next page
 *   starts and `id` is the item just before it (the last one served). A position whose `id` is no
 *   longer at `index - 1` is stale (the tree changed in front of it): the caller answers 400.
 */

/** The folder template key. */
export const folderTemplateKey = "folder"

/** Deepest `depth` a listing may ask for. */
export const maxIndexDepth = 20

/** One live page or folder of a Knowledgebase, as stored. */
export interface PageRow {
  readonly id: string
  readonly parentPageId: string | null
  readonly title: string
  readonly description: string
  readonly templateKey: string
  readonly updatedAt: string
  readonly createdAt: string
  readonly hook: string
}

/** One item of the page index (spec: "Page index item"). */
export interface IndexItem {
  readonly id: string
  readonly title: string
  readonly description: string
  readonly templateKey: string
  readonly parentPageId: string | null
  readonly updatedAt: string
  readonly hook: string
  readonly isFolder: boolean
  /** Titles of all ancestors from the top of the Knowledgebase, nearest last. */
  readonly path: ReadonlyArray<string>
  /** 1 for the direct children of the listing root (the top level when there is no parent). */
  readonly depth: number
  /** Direct children (folders and pages). */
  readonly childCount: number
  /** Non-folder pages of the whole subtree, excluding the item itself. */
  readonly pageCount: number
  /** The item has children beyond the requested depth. */
  readonly collapsed: boolean
}

/** The listing's parent as answered (`parent` of the response). */
export interface IndexParent {
  readonly id: string
  readonly title: string
  readonly description: string
  readonly isFolder: boolean
}

/** What to list: the whole tree, the top level, or below one page or folder (by id). */
export type IndexParentOption =
  | { readonly kind: "all" }
  | { readonly kind: "top" }
  | { readonly kind: "page"; readonly id: string }

export interface IndexOptions {
  readonly parent: IndexParentOption
  /** 1..20; see the module comment for the default of each parent kind. */
  readonly depth?: number | undefined
  /** ISO 8601 date-time; keeps items whose `updatedAt` is at or after it. */
  readonly updatedSince?: string | undefined
}

export interface PageIndex {
  readonly parent: IndexParent | null
  /** In tree order. */
  readonly items: ReadonlyArray<IndexItem>
}

/** The answer of {@link resolveParent}. */
export type ResolvedParent =
  | { readonly kind: "page"; readonly id: string }
  | { readonly kind: "not_found" }
  | { readonly kind: "ambiguous"; readonly ids: ReadonlyArray<string> }

/** A paging position: the next page starts at `index`; `id` is the item at `index - 1`. */
export interface IndexPosition {
  readonly index: number
  readonly id: string
}

/** One page of a listing; `stale` when the position no longer matches the list. */
export type ItemsPage<A> =
  | { readonly stale: false; readonly items: ReadonlyArray<A>; readonly next: IndexPosition | null }
  | { readonly stale: true; readonly items: ReadonlyArray<A>; readonly next: null }

// ---------------------------------------------------------------------------------------------------
// The forest

/** Parent index of top-level rows. */
const root = -1

/**
 * The rows arranged as a forest, built once by {@link pageForest} and reusable across
 * {@link buildIndex}, {@link resolveParent} and {@link subtreeIds} on the same rows. Its layout is
 * internal: pass it back, do not read it.
 */
export interface PageForest {
  /** The rows, duplicates dropped; row indexes below point here. */
  readonly rows: ReadonlyArray<PageRow>
  /** Row index by id. */
  readonly byId: ReadonlyMap<string, number>
  /** Effective parent row index per row (-1 for top level). */
  readonly parentOf: Int32Array
  /**
   * Children in sibling order: those of row `i` are `childList[childStart[i] .. childStart[i + 1])`;
   * the top level is the pseudo-row `rows.length`.
   */
  readonly childStart: Int32Array
  readonly childList: Int32Array
  /** Every row index in tree order (pre-order). */
  readonly order: Int32Array
  /** Non-folder pages below each row (excluding itself). */
  readonly pageCount: Int32Array
}

const isForest = (input: ReadonlyArray<PageRow> | PageForest): input is PageForest => !Array.isArray(input)

const forestOf = (input: ReadonlyArray<PageRow> | PageForest): PageForest => (isForest(input) ? input : pageForest(input))

const isFolderRow = (row: PageRow): boolean => row.templateKey === folderTemplateKey

/** The digit at `i`, or NaN. */
const digit = (text: string, i: number): number => {
  const code = text.charCodeAt(i) - 48
  return code >= 0 && code <= 9 ? code : Number.NaN
}

/**
 * Milliseconds of an ISO 8601 date-time, or NaN. The stored shape `YYYY-MM-DDTHH:MM:SS.sssZ` is read
 * directly (about four times faster than `Date.parse`, which matters at 10,000 rows); anything else
 * goes through `Date.parse`.
 */
const instant = (text: string): number => {
  if (
    text.length !== 24 ||
    text.charCodeAt(4) !== 45 || // -
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 84 || // T
    text.charCodeAt(13) !== 58 || // :
    text.charCodeAt(16) !== 58 ||
    text.charCodeAt(19) !== 46 || // .
    text.charCodeAt(23) !== 90 // Z
  ) {
    return Date.parse(text)
  }
  const year = digit(text, 0) * 1000 + digit(text, 1) * 100 + digit(text, 2) * 10 + digit(text, 3)
  const month = digit(text, 5) * 10 + digit(text, 6)
  const day = digit(text, 8) * 10 + digit(text, 9)
  const hour = digit(text, 11) * 10 + digit(text, 12)
  const minute = digit(text, 14) * 10 + digit(text, 15)
  const second = digit(text, 17) * 10 + digit(text, 18)
  const milli = digit(text, 20) * 100 + digit(text, 21) * 10 + digit(text, 22)
  // Anything unusual (a non-digit, month 13, Feb 30, 24:00, …) is left to Date.parse, whose verdict
  // stands; so both paths always agree.
  if (
    !(
      year >= 100 && // Date.UTC reads years 0..99 as 1900..1999
      month >= 1 &&
      month <= 12 &&
      day >= 1 &&
      day <= daysInMonth(year, month) &&
      hour <= 23 &&
      minute <= 59 &&
      second <= 59 &&
      milli >= 0
    )
  ) {
    return Date.parse(text)
  }
  return Date.UTC(year, month - 1, day, hour, minute, second, milli)
}

const daysInMonth = (year: number, month: number): number => {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Builds the forest of `rows` (any order). Duplicated ids keep their first row. */
export const pageForest = (input: ReadonlyArray<PageRow>): PageForest => {
  // Unique rows, first occurrence wins.
  const byId = new Map<string, number>()
  const rows: Array<PageRow> = []
  for (const row of input) {
    if (byId.get(row.id) === undefined) {
      byId.set(row.id, rows.length)
      rows.push(row)
    }
  }
  const n = rows.length

  // Sibling order over all rows at once: createdAt (as an instant; unreadable ones last), then id.
  const created = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    const ms = instant(rows[i]!.createdAt)
    created[i] = Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms
  }
  const sorted = new Array<number>(n)
  for (let i = 0; i < n; i++) sorted[i] = i
  sorted.sort((a, b) => {
    const ca = created[a]!
    const cb = created[b]!
    return ca < cb ? -1 : ca > cb ? 1 : compareText(rows[a]!.id, rows[b]!.id)
  })

  // Effective parents: missing or self parents are top level.
  const parentOf = new Int32Array(n)
  for (let i = 0; i < n; i++) {
    const parentId = rows[i]!.parentPageId
    const parent = parentId === null ? undefined : byId.get(parentId)
    parentOf[i] = parent === undefined || parent === i ? root : parent
  }

  // Break cycles: walk up from every row; a walk that meets its own trail found a cycle, whose
  // first member in sibling order becomes top level. Each row is walked once (state 2 = done).
  const state = new Uint8Array(n) // 0 unvisited, 1 on the current trail, 2 done
  const trail: Array<number> = []
  let rank: Int32Array | undefined
  for (let start = 0; start < n; start++) {
    if (state[start] !== 0) continue
    let at = start
    while (at !== root && state[at] === 0) {
      state[at] = 1
      trail.push(at)
      at = parentOf[at]!
    }
    if (at !== root && state[at] === 1) {
      // `at` is on the current trail: the cycle is the trail from `at` to its end.
      if (rank === undefined) {
        rank = new Int32Array(n)
        for (let k = 0; k < n; k++) rank[sorted[k]!] = k
      }
      let first = at
      for (let k = trail.lastIndexOf(at); k < trail.length; k++) {
        const member = trail[k]!
        if (rank[member]! < rank[first]!) first = member
      }
      parentOf[first] = root
    }
    for (const member of trail) state[member] = 2
    trail.length = 0
  }

  // Children lists (compressed: one offset per row plus the top-level pseudo-row `n`), each in
  // sibling order because rows are placed in sibling order.
  const childStart = new Int32Array(n + 2)
  for (let i = 0; i < n; i++) {
    const parent = parentOf[i]!
    childStart[(parent === root ? n : parent) + 1]! += 1
  }
  for (let i = 1; i <= n + 1; i++) childStart[i]! += childStart[i - 1]!
  const fill = childStart.slice(0, n + 1)
  const childList = new Int32Array(n)
  for (let k = 0; k < n; k++) {
    const i = sorted[k]!
    const parent = parentOf[i]!
    childList[fill[parent === root ? n : parent]!++] = i
  }

  // Pre-order of the whole forest (iterative: a deep chain must not overflow the stack).
  const order = new Int32Array(n)
  let filled = 0
  const stack = new Int32Array(n)
  let top = 0
  for (let k = childStart[n + 1]! - 1; k >= childStart[n]!; k--) stack[top++] = childList[k]!
  while (top > 0) {
    const i = stack[--top]!
    order[filled++] = i
    for (let k = childStart[i + 1]! - 1; k >= childStart[i]!; k--) stack[top++] = childList[k]!
  }

  // Subtree page counts, children before parents (reverse pre-order).
  const pageCount = new Int32Array(n)
  for (let k = n - 1; k >= 0; k--) {
    const i = order[k]!
    const parent = parentOf[i]!
    if (parent !== root) pageCount[parent]! += pageCount[i]! + (isFolderRow(rows[i]!) ? 0 : 1)
  }

  return { rows, byId, parentOf, childStart, childList, order, pageCount }
}

// ---------------------------------------------------------------------------------------------------
// The index

/** Titles of the ancestors of row `i`, from the top. */
const ancestorTitles = (forest: PageForest, i: number): Array<string> => {
  const titles: Array<string> = []
  for (let at = forest.parentOf[i]!; at !== root; at = forest.parentOf[at]!) titles.push(forest.rows[at]!.title)
  return titles.reverse()
}

const checkDepth = (depth: number): number => {
  if (!Number.isInteger(depth) || depth < 1 || depth > maxIndexDepth) {
    throw new RangeError(`depth must be a whole number from 1 to ${maxIndexDepth}, got ${depth}`)
  }
  return depth
}

/**
 * The page index of `rows` (or of a {@link pageForest}) as `options` ask: items in tree order.
 * Throws `RangeError` for a bad `depth` or `updatedSince`, and `Error` for a parent id that is not
 * among the rows (resolve it first with {@link resolveParent}).
 */
export const buildIndex = (input: ReadonlyArray<PageRow> | PageForest, options: IndexOptions): PageIndex => {
  const forest = forestOf(input)
  const { rows, parentOf, childStart, childList, pageCount } = forest

  const maxDepth =
    options.depth !== undefined ? checkDepth(options.depth) : options.parent.kind === "top" ? 1 : Number.POSITIVE_INFINITY

  let since = Number.NEGATIVE_INFINITY
  if (options.updatedSince !== undefined) {
    since = instant(options.updatedSince)
    if (Number.isNaN(since)) throw new RangeError(`updatedSince must be an ISO 8601 date-time, got ${options.updatedSince}`)
  }

  let parent: IndexParent | null = null
  let start = rows.length // the top-level pseudo-row
  let basePath: ReadonlyArray<string> = []
  if (options.parent.kind === "page") {
    const at = forest.byId.get(options.parent.id)
    if (at === undefined) throw new Error(`page ${options.parent.id} is not in this Knowledgebase`)
    const row = rows[at]!
    parent = { id: row.id, title: row.title, description: row.description, isFolder: isFolderRow(row) }
    start = at
    basePath = [...ancestorTitles(forest, at), row.title]
  }

  const items: Array<IndexItem> = []
  // Depth-first pre-order over parallel stacks: the row, its depth (relative) and its path.
  const rowStack: Array<number> = []
  const depthStack: Array<number> = []
  const pathStack: Array<ReadonlyArray<string>> = []
  for (let k = childStart[start + 1]! - 1; k >= childStart[start]!; k--) {
    rowStack.push(childList[k]!)
    depthStack.push(1)
    pathStack.push(basePath)
  }
  while (rowStack.length > 0) {
    const i = rowStack.pop()!
    const depth = depthStack.pop()!
    const path = pathStack.pop()!
    const row = rows[i]!
    const first = childStart[i]!
    const childCount = childStart[i + 1]! - first
    if (depth < maxDepth && childCount > 0) {
      const childPath = [...path, row.title]
      for (let k = first + childCount - 1; k >= first; k--) {
        rowStack.push(childList[k]!)
        depthStack.push(depth + 1)
        pathStack.push(childPath)
      }
    }
    if (since !== Number.NEGATIVE_INFINITY && !(instant(row.updatedAt) >= since)) continue
    const parentIndex = parentOf[i]!
    items.push({
      id: row.id,
      title: row.title,
      description: row.description,
      templateKey: row.templateKey,
      parentPageId: parentIndex === root ? null : rows[parentIndex]!.id,
      updatedAt: row.updatedAt,
      hook: row.hook,
      isFolder: isFolderRow(row),
      path: [...path],
      depth,
      childCount,
      pageCount: pageCount[i]!,
      collapsed: childCount > 0 && depth >= maxDepth
    })
  }
  return { parent, items }
}

// ---------------------------------------------------------------------------------------------------
// Parent resolution and subtrees

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Resolves a `parentPageId` query value: the id of any page or folder (wins), else the exact,
 * case-sensitive title of exactly one folder. Several folders with that title are ambiguous (ids in
 * tree order). `null` / "top level" is the caller's business.
 */
export const resolveParent = (input: ReadonlyArray<PageRow> | PageForest, value: string): ResolvedParent => {
  const forest = forestOf(input)
  if (forest.byId.has(value)) return { kind: "page", id: value }
  // Ids are stored in lower case; a UUID given in another case still names its page.
  const lower = value.toLowerCase()
  if (lower !== value && uuidPattern.test(value) && forest.byId.has(lower)) return { kind: "page", id: lower }
  const ids: Array<string> = []
  for (const i of forest.order) {
    const row = forest.rows[i]!
    if (isFolderRow(row) && row.title === value) ids.push(row.id)
  }
  const [only] = ids
  if (only === undefined) return { kind: "not_found" }
  return ids.length === 1 ? { kind: "page", id: only } : { kind: "ambiguous", ids }
}

/**
 * `id` and all its descendants, in tree order; empty when `id` is not among the rows. A page may
 * not be moved under any of these (its own sub-pages, or itself).
 */
export const subtreeIds = (input: ReadonlyArray<PageRow> | PageForest, id: string): Array<string> => {
  const forest = forestOf(input)
  const start = forest.byId.get(id)
  if (start === undefined) return []
  const { rows, childStart, childList } = forest
  const ids: Array<string> = []
  const stack = [start]
  while (stack.length > 0) {
    const i = stack.pop()!
    ids.push(rows[i]!.id)
    for (let k = childStart[i + 1]! - 1; k >= childStart[i]!; k--) stack.push(childList[k]!)
  }
  return ids
}

// ---------------------------------------------------------------------------------------------------
// Paging

/**
 * One page of `items` starting after `after` (null: from the start), at most `limit` long (a
 * positive whole number; `RangeError` otherwise). `next` is null on the last page. A position is
 * stale when `after.id` is no longer the item at `after.index - 1` (or the index is out of range):
 * then `stale: true`, no items, and the caller answers 400.
 */
export const pageOfItems = <A extends { readonly id: string }>(
  items: ReadonlyArray<A>,
  request: { readonly limit: number; readonly after: IndexPosition | null }
): ItemsPage<A> => {
  const { limit, after } = request
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive whole number, got ${limit}`)
  let start = 0
  if (after !== null) {
    const index = after.index
    if (!Number.isInteger(index) || index < 1 || index > items.length || items[index - 1]!.id !== after.id) {
      return { stale: true, items: [], next: null }
    }
    start = index
  }
  const end = Math.min(start + limit, items.length)
  const page = items.slice(start, end)
  const last = page[page.length - 1]
  const next = end < items.length && last !== undefined ? { index: end, id: last.id } : null
  return { stale: false, items: page, next }
}
