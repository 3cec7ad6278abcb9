/**
 * Seeds one Knowledgebase with a large page tree straight into the SQLite file of a running svc
 * server (bench/pages.ts): folders nested three deep, pages under them and sub-pages under some
 * pages (five levels in all), realistic markdown bodies of 2–8 KB, some linking to other pages with
 * `svcpage://`. Rows are what the service itself writes for a create: the page, its applied
 * revision 1, its entry in the changes feed and its links; and the Knowledgebase's `pages_count`.
 *
 * One transaction on its own better-sqlite3 connection; the server sees the rows through
 * `PRAGMA data_version` like any other commit (e.g. the CLI's).
 *
 * Every page body holds the patch anchors of {@link patchOperations} exactly once, and nothing in
 * the filler text can repeat them.
 */
import Database from "better-sqlite3"
import { randomUUID } from "node:crypto"
import { hookOf } from "../server/knowledge/pages/service.js"
import type { PatchOperation } from "../server/knowledge/pages/patch.js"

export interface SeedOptions {
  readonly dbFile: string
  readonly organizationId: string
  readonly knowledgebaseId: string
  /** Pages and folders in all (default 10,000). */
  readonly total?: number
  /** Share of pages whose body links to other pages (default 0.3). */
  readonly linkedShare?: number
  /** PRNG seed (default 42): the same seed gives the same titles, sizes and shape. */
  readonly seed?: number
}

export interface SeededPage {
  readonly id: string
  readonly depth: number
  readonly links: number
  readonly bytes: number
}

export interface SeedResult {
  readonly folders: number
  readonly pages: ReadonlyArray<SeededPage>
  readonly maxDepth: number
  readonly pageBytes: { readonly total: number; readonly min: number; readonly max: number; readonly mean: number }
  readonly pagesWithLinks: number
  readonly linkRows: number
  readonly seconds: number
  /** Size of the database file and its WAL after the seeding's checkpoint. */
  readonly databaseBytes: number
  readonly checkpoint: { readonly busy: number; readonly log: number; readonly checkpointed: number }
}

/** mulberry32: small, fast, deterministic. */
const prng = (seed: number) => {
  let state = seed >>> 0
  return (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const topFolders = ["Product", "Engineering", "Support", "Sales", "Marketing", "Operations", "Finance", "People", "Legal", "Security"]
const subFolders = ["Guides", "Policies", "Runbooks", "Reference", "Onboarding", "Projects", "Templates", "Decisions", "Meetings", "Archive"]
const leafFolders = ["2021", "2022", "2023", "2024", "2025", "Drafts", "Approved", "Regional", "Customers", "Partners"]
const subjects = [
  "refund policy", "escalation path", "release checklist", "incident review", "pricing tiers", "data retention",
  "vendor onboarding", "access requests", "travel expenses", "holiday schedule", "API rate limits", "backup restore",
  "customer interviews", "quarterly planning", "hiring loop", "security training", "contract renewal", "invoice disputes",
  "feature flags", "support macros", "on-call rotation", "brand guidelines", "SLA terms", "GDPR requests"
]
const words = (
  "the a team customer request process review account support order policy service update release data system " +
  "agent page owner change issue ticket plan week month quarter approval manager document version budget region " +
  "partner contract invoice payment refund delivery schedule response escalation incident priority queue report " +
  "metric target feedback training access permission backup storage network client server deploy rollback test " +
  "should must can will may often usually always never before after during within across between under over " +
  "checks confirms records sends reviews approves rejects tracks updates closes opens assigns measures explains"
).split(" ")
const teams = ["billing", "platform", "care", "growth", "infra", "compliance", "success", "design"]

/** Anchors every seeded page body holds exactly once. */
export const anchors = {
  status: "Status: draft",
  owner: "Owner: ",
  reviewed: "Last reviewed: never",
  summary: "## Summary\n",
  details: "## Details\n",
  examples: "## Examples\n",
  questions: "## Open questions\n",
  references: "## References\n"
} as const

/**
 * The benchmark's 10-operation patch (5 `replace`, 3 `insert_after`, 2 `append`) for edit number
 * `n`. Every replacement keeps its anchor at the start of the new text and no inserted text holds an
 * anchor, so the patch also applies again to a page it already changed: every request must be 200.
 */
export const patchOperations = (n: number): Array<PatchOperation> => [
  { op: "replace", oldString: anchors.status, newString: `${anchors.status}; reviewed in edit ${n}` },
  { op: "replace", oldString: anchors.owner, newString: `${anchors.owner}(confirmed in edit ${n}) ` },
  { op: "replace", oldString: anchors.reviewed, newString: `${anchors.reviewed} before edit ${n}` },
  { op: "insert_after", anchor: anchors.summary, text: `\nEdit ${n} checked this summary against the current process.\n` },
  { op: "insert_after", anchor: anchors.details, text: `\nThe details below were confirmed by the owning team in edit ${n}.\n` },
  { op: "insert_after", anchor: anchors.examples, text: `\n- Example added in edit ${n}: a customer asks twice within a week.\n` },
  { op: "replace", oldString: anchors.questions, newString: `${anchors.questions}\n- Raised in edit ${n}: who signs off on exceptions?\n` },
  { op: "replace", oldString: anchors.references, newString: `${anchors.references}\n- Meeting notes of edit ${n}\n` },
  { op: "append", text: `\n\n---\nChange log: edit ${n} applied.\n` },
  { op: "append", text: `Next review in ${(n % 11) + 1} weeks.\n` }
]

interface Node {
  readonly id: string
  readonly parent: string | null
  readonly title: string
  readonly description: string
  readonly folder: boolean
  readonly depth: number
}

/** Builds the tree shape (pre-order, parents first): 10 × 10 × 10 folders, pages below. */
const shape = (total: number, random: () => number): Array<Node> => {
  const nodes: Array<Node> = []
  const folder = (parent: string | null, title: string, depth: number): string => {
    const id = randomUUID()
    nodes.push({ id, parent, title, description: `${title}: documents of this area.`, folder: true, depth })
    return id
  }
  const leaves: Array<{ id: string; path: string }> = []
  for (const top of topFolders) {
    const topId = folder(null, top, 1)
    for (const sub of subFolders) {
      const subId = folder(topId, sub, 2)
      for (const leaf of leafFolders) leaves.push({ id: folder(subId, leaf, 3), path: `${top} / ${sub} / ${leaf}` })
    }
  }
  const pageCount = total - nodes.length
  if (pageCount < leaves.length) throw new Error(`total ${total} is too small for ${nodes.length} folders and a page per leaf folder`)
  const perLeaf = Math.floor(pageCount / leaves.length)
  const extra = pageCount % leaves.length
  let serial = 0
  for (const [i, leaf] of leaves.entries()) {
    const count = perLeaf + (i < extra ? 1 : 0)
    // the first page of a folder is its overview; from the seventh on, pages are its sub-pages
    let overview: string | null = null
    for (let k = 0; k < count; k++) {
      serial++
      const subject = subjects[Math.floor(random() * subjects.length)]!
      const title = k === 0 ? `Overview: ${leaf.path}` : `${subject[0]!.toUpperCase()}${subject.slice(1)} (${serial})`
      const id = randomUUID()
      const underOverview = overview !== null && k >= 6
      nodes.push({
        id,
        parent: underOverview ? overview : leaf.id,
        title,
        description: k === 0 ? `What ${leaf.path} holds.` : `How we handle ${subject}.`,
        folder: false,
        depth: underOverview ? 5 : 4
      })
      if (k === 0) overview = id
    }
  }
  return nodes
}

const sentence = (random: () => number): string => {
  const length = 8 + Math.floor(random() * 13)
  const picked: Array<string> = []
  for (let i = 0; i < length; i++) picked.push(words[Math.floor(random() * words.length)]!)
  const text = picked.join(" ")
  return `${text[0]!.toUpperCase()}${text.slice(1)}.`
}

const paragraph = (random: () => number): string => {
  const count = 3 + Math.floor(random() * 4)
  return Array.from({ length: count }, () => sentence(random)).join(" ")
}

/** A page body of about `target` bytes holding every anchor once and `links` `svcpage://` links. */
const body = (node: Node, target: number, links: ReadonlyArray<Node>, random: () => number): string => {
  const team = teams[Math.floor(random() * teams.length)]!
  const head = [
    `# ${node.title}`,
    "",
    paragraph(random),
    "",
    `${anchors.status}`,
    `${anchors.owner}team ${team}`,
    `${anchors.reviewed}`,
    "",
    `${anchors.summary}`,
    paragraph(random),
    "",
    `${anchors.details}`
  ].join("\n")
  const inline =
    links.length > 0 ? `\nThis builds on [${links[0]!.title}](svcpage://${links[0]!.id}); read that first.\n` : ""
  const tail = [
    "",
    `${anchors.examples}`,
    ...Array.from({ length: 3 }, () => `- ${sentence(random)}`),
    "",
    "```text",
    `ticket ${Math.floor(random() * 90_000) + 10_000} -> queue ${team} -> priority ${1 + Math.floor(random() * 4)}`,
    "```",
    "",
    `${anchors.questions}`,
    `- ${sentence(random)}`,
    "",
    `${anchors.references}`,
    ...(links.length > 0
      ? links.map((link) => `- [${link.title}](svcpage://${link.id})`)
      : ["- Internal handbook, chapter on this topic", "- Last quarter's review notes"]),
    ""
  ].join("\n")
  const parts = [head, inline]
  let size = head.length + inline.length + tail.length
  let sinceList = 0
  while (size < target) {
    const next =
      sinceList >= 3 && random() < 0.4
        ? Array.from({ length: 3 + Math.floor(random() * 4) }, () => `- ${sentence(random)}`).join("\n")
        : paragraph(random)
    sinceList = next.startsWith("- ") ? 0 : sinceList + 1
    parts.push(`\n${next}\n`)
    size += next.length + 2
  }
  parts.push(tail)
  return parts.join("")
}

/** Seeds the Knowledgebase; see the module comment. */
export const seedPages = (options: SeedOptions): SeedResult => {
  const started = performance.now()
  const random = prng(options.seed ?? 42)
  const total = options.total ?? 10_000
  const linkedShare = options.linkedShare ?? 0.3
  const nodes = shape(total, random)
  const pages = nodes.filter((n) => !n.folder)

  const db = new Database(options.dbFile, { fileMustExist: true, timeout: 10_000 })
  try {
    db.pragma("foreign_keys = ON")
    db.pragma("synchronous = NORMAL")
    const insertPage = db.prepare(
      `INSERT INTO pages (id, organization_id, knowledgebase_id, parent_page_id, title, description, template_key,
         markdown, hook, revision, author, created_at, updated_at, fts_key)
       VALUES (@id, @organization_id, @knowledgebase_id, @parent_page_id, @title, @description, @template_key,
         @markdown, @hook, @revision, @author, @created_at, @updated_at, (SELECT coalesce(max(fts_key), 0) + 1 FROM pages))`
    )
    const insertRevision = db.prepare(
      `INSERT INTO page_revisions (id, organization_id, knowledgebase_id, page_id, number, kind, status, operation,
         title, description, markdown, author, created_at, reviewed_at)
       VALUES (?, ?, ?, ?, 1, 'create', 'applied', ?, ?, ?, ?, ?, ?, NULL)`
    )
    const insertChange = db.prepare(
      `INSERT OR REPLACE INTO changes (organization_id, knowledgebase_id, object_type, object_id, change, changed_at)
       VALUES (?, ?, ?, ?, 'created', ?)`
    )
    const insertLink = db.prepare("INSERT OR IGNORE INTO page_links (page_id, target_page_id) VALUES (?, ?)")
    const author = "bench seed"
    // history: one item a second, the last one a minute ago; the Knowledgebase is backdated before it
    const first = Date.now() - (nodes.length + 60) * 1_000
    const at = (i: number) => new Date(first + i * 1_000).toISOString()

    let bytes = 0
    let min = Number.POSITIVE_INFINITY
    let max = 0
    let pagesWithLinks = 0
    const linkRows: Array<[string, string]> = []
    const seeded: Array<SeededPage> = []
    db.transaction(() => {
      for (const [i, node] of nodes.entries()) {
        let markdown = ""
        let links: Array<Node> = []
        if (!node.folder) {
          if (random() < linkedShare) {
            const count = 1 + Math.floor(random() * 3)
            const picked = new Map<string, Node>()
            while (picked.size < count) {
              const target = pages[Math.floor(random() * pages.length)]!
              if (target.id !== node.id) picked.set(target.id, target)
            }
            links = [...picked.values()]
            pagesWithLinks++
            for (const link of links) linkRows.push([node.id, link.id])
          }
          markdown = body(node, 2_048 + Math.floor(random() * 6_145), links, random)
          const size = Buffer.byteLength(markdown, "utf8")
          bytes += size
          min = Math.min(min, size)
          max = Math.max(max, size)
          seeded.push({ id: node.id, depth: node.depth, links: links.length, bytes: size })
        }
        const row = {
          id: node.id,
          organization_id: options.organizationId,
          knowledgebase_id: options.knowledgebaseId,
          parent_page_id: node.parent,
          title: node.title,
          description: node.description,
          template_key: node.folder ? "folder" : "page",
          markdown,
          hook: hookOf(markdown),
          revision: 1,
          author,
          created_at: at(i),
          updated_at: at(i)
        }
        insertPage.run(row)
        insertRevision.run(
          randomUUID(),
          options.organizationId,
          options.knowledgebaseId,
          node.id,
          JSON.stringify({ kind: "create", page: row }),
          row.title,
          row.description,
          markdown,
          author,
          row.created_at
        )
        insertChange.run(options.organizationId, options.knowledgebaseId, node.folder ? "folder" : "page", node.id, row.created_at)
      }
      // links last: every target exists by now
      for (const [from, to] of linkRows) insertLink.run(from, to)
      const updated = db
        .prepare(
          `UPDATE knowledgebases SET pages_count = pages_count + ?, created_at = min(created_at, ?), updated_at = ?
           WHERE id = ? AND organization_id = ?`
        )
        .run(pages.length, new Date(first - 60_000).toISOString(), at(nodes.length - 1), options.knowledgebaseId, options.organizationId)
      if (updated.changes !== 1) throw new Error(`Knowledgebase ${options.knowledgebaseId} not found in organization ${options.organizationId}`)
    })()
    const [checkpoint] = db.pragma("wal_checkpoint(TRUNCATE)") as Array<{ busy: number; log: number; checkpointed: number }>
    const pageSize = db.pragma("page_size", { simple: true }) as number
    const pageCount = db.pragma("page_count", { simple: true }) as number
    return {
      folders: nodes.length - pages.length,
      pages: seeded,
      maxDepth: Math.max(...nodes.map((n) => n.depth)),
      pageBytes: { total: bytes, min, max, mean: Math.round(bytes / Math.max(1, seeded.length)) },
      pagesWithLinks,
      linkRows: linkRows.length,
      seconds: Number(((performance.now() - started) / 1000).toFixed(2)),
      databaseBytes: pageSize * pageCount,
      checkpoint: checkpoint ?? { busy: -1, log: -1, checkpointed: -1 }
    }
  } finally {
    db.close()
  }
}
