/**
 * The benchmark's BASELINE: `GET` and `POST /api/v1/knowledgebases` and a page `PATCH` written by hand on `node:http`
 * and better-sqlite3, over the same SQLite file as the svc server, doing the same work per request:
 *
 * - parse `Authorization: Bearer <key>`, check the key's shape, sha256-hash it and look the key up
 *   joined with its organization and member (one prepared statement on `secret_hash`, like svc);
 * - refuse revoked keys, keys of removed members, plans without the API, and missing scopes; record
 *   `last_used_at` at most once a minute per key (as svc does);
 * - GET: parse `limit` (1..200, default 50) and `cursor`, run the same keyset select for `limit + 1`
 *   rows, and answer the same JSON bytes as svc, `nextCursor` included (signed with the same
 *   database-held secret, so the bodies are byte-identical);
 * - POST: read the body (4.5 MB cap), validate `name`/`description` like the contract, and in one
 *   transaction check the plan cap and insert the row; answer 201 with the same envelope;
 * - POST with an `Idempotency-Key` (1 to 64 characters, as the SDK and the CLI send on every create):
 *   the same, and in that one transaction first look the key up in svc's `idempotency_keys` table
 *   (organization, `POST /api/v1/knowledgebases`, key; live `done` rows only) and replay its stored
 *   answer with `Idempotent-Replayed: true` (409 `conflict` for another body), else store the answer
 *   (201, or the 403 `plan_limit` refusal) as the row svc stores: the body's fingerprint (sha256 of
 *   its JSON, keys sorted), state `done`, status, body, created and expiring 24 hours later (ms);
 * - PATCH `/knowledgebases/:id/pages/:pageId` (`{patch?, description?}`): check the Knowledgebase and
 *   read the page, apply the operations with svc's own `applyPatch` and resolve the body's links with
 *   its `extractLinks`/`resolveLinks` (the same pure functions), then in one transaction re-read the
 *   page (revision unchanged), look the link targets up, update the page, store the revision, replace
 *   the links, append the change and touch the Knowledgebase; answer the same `PageWrite` JSON. (The
 *   review gate is not implemented: the benchmark's organization has it off.)
 * - set `x-request-id` on every response; errors are `{error:{code,message}}`.
 *
 * What it leaves out on purpose: the rate limiter (svc runs its limiter in the benchmark, with the
 * limit raised), svc's look-up of the key before its transaction and its retry when a concurrent
 * request took the key (one IMMEDIATE SQLite transaction cannot race), the hourly purge of expired
 * keys, OpenAPI, logging and routing beyond the one path.
 *
 *   node dist/bench/baseline-server.js --db <dataDir>/svc.sqlite [--port 0]
 */
import Database from "better-sqlite3"
import { createHash, createHmac, randomUUID, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { parseArgs } from "node:util"
import { extractLinks, resolveLinks } from "../server/knowledge/pages/links.js"
import { applyPatch, type PatchOperation } from "../server/knowledge/pages/patch.js"
import type { BaselineReady } from "./protocol.js"

const { values } = parseArgs({ options: { db: { type: "string" }, port: { type: "string", default: "0" } } })
if (!values.db) throw new Error("--db is required")

// ---- database -------------------------------------------------------------------------------

const db = new Database(values.db, { fileMustExist: true })
db.pragma("journal_mode = WAL")
db.pragma("busy_timeout = 5000")
db.pragma("synchronous = NORMAL")
db.pragma("foreign_keys = ON")

interface CredentialRow {
  readonly id: string
  readonly organization_id: string
  readonly kind: "organization" | "personal"
  readonly member_id: string | null
  readonly prefix: string
  readonly scopes: string
  readonly revoked_at: string | null
  readonly o_plan: string
  readonly o_gates: string
  readonly m_role: string | null
  readonly m_removed_at: string | null
  readonly m_email: string | null
  readonly name: string
}

interface KnowledgebaseRow {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly pages_count: number
  readonly sources_count: number
  readonly created_at: string
  readonly updated_at: string
}

const credentialByHash = db.prepare<[string], CredentialRow>(
  `SELECT k.*, o.slug AS o_slug, o.name AS o_name, o.plan AS o_plan, o.gates AS o_gates,
      o.credits_remaining AS o_credits_remaining, o.credits_used AS o_credits_used,
      o.created_at AS o_created_at, m.email AS m_email, m.role AS m_role,
      m.created_at AS m_created_at, m.removed_at AS m_removed_at
    FROM api_keys k
    JOIN organizations o ON o.id = k.organization_id
    LEFT JOIN members m ON m.id = k.member_id
    WHERE k.secret_hash = ?`
)
const touchKey = db.prepare<[string, string]>("UPDATE api_keys SET last_used_at = ? WHERE id = ?")
const listFirst = db.prepare<[string, number], KnowledgebaseRow>(
  `SELECT id, name, description, pages_count, sources_count, created_at, updated_at
    FROM knowledgebases WHERE organization_id = ?
    ORDER BY created_at, id LIMIT ?`
)
const listAfter = db.prepare<[string, string, string, number], KnowledgebaseRow>(
  `SELECT id, name, description, pages_count, sources_count, created_at, updated_at
    FROM knowledgebases WHERE organization_id = ? AND (created_at, id) > (?, ?)
    ORDER BY created_at, id LIMIT ?`
)
const countKnowledgebases = db.prepare<[string], { n: number }>(
  "SELECT count(*) AS n FROM knowledgebases WHERE organization_id = ?"
)
const insertKnowledgebase = db.prepare<[string, string, string, string, string, string, string]>(
  `INSERT INTO knowledgebases (id, organization_id, name, description, created_by_key_id, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)`
)
const cursorSecretRow = db.prepare<[], { value: string }>("SELECT value FROM settings WHERE name = 'cursor_secret'").get()
if (!cursorSecretRow) throw new Error("no cursor_secret in settings: start the svc server on this database first")
const cursorSecret = Buffer.from(cursorSecretRow.value, "hex")

// ---- rules (copied from the contract; see server/identity/domain.ts) -----------------

const secretPattern = /^svc[op]_[0-9A-Za-z]{40}$/
const bearerPattern = /^Bearer[ ]+([^\s]+)[ ]*$/
const apiPlans = new Set(["pro", "agency"])
const knowledgebaseCaps: Readonly<Record<string, number>> = { trial: 2, creator: 5, pro: 50, agency: 200, lifetime: 20 }
const roleRank: Readonly<Record<string, number>> = { viewer: 0, member: 1, admin: 2 }
const scopeMinimumRole: Readonly<Record<string, string>> = { "knowledge:read": "viewer", "knowledge:write": "member" }
const allScopes = [
  "agents:read", "agents:execute", "agents:write", "flows:read", "flows:execute", "flows:write", "apps:read",
  "apps:execute", "apps:write", "knowledge:read", "knowledge:write", "end_users:read", "end_users:write"
]
const maxBodyBytes = 4_500_000
const lastUsedResolutionMs = 60_000
const lastTouched = new Map<string, number>()

// ---- responses --------------------------------------------------------------------------------

const send = (res: ServerResponse, requestId: string, status: number, body: string, headers: Readonly<Record<string, string>> = {}): void => {
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "x-request-id": requestId,
    ...headers
  })
  res.end(body)
}

const fail = (res: ServerResponse, requestId: string, status: number, code: string, message: string): void =>
  send(res, requestId, status, JSON.stringify({ error: { code, message } }))

/** A failed check. */
interface Refusal {
  readonly status: number
  readonly code: string
  readonly message: string
}
const refuse = (status: number, code: string, message: string): Refusal => ({ status, code, message })
const isRefusal = (value: Caller | Refusal): value is Refusal => "code" in value

interface Caller {
  readonly keyId: string
  readonly organizationId: string
  readonly plan: string
  readonly author: string
}

/** Authenticates the request and checks plan and `scope`, like svc's authentication middleware. */
const authenticate = (req: IncomingMessage, scope: string): Caller | Refusal => {
  const match = bearerPattern.exec(req.headers.authorization ?? "")
  if (!match) return refuse(401, "unauthorized", "Send the API key in the header 'Authorization: Bearer <API_KEY>'.")
  const secret = match[1]!
  if (!secretPattern.test(secret)) return refuse(401, "invalid_api_key", "The API key matches no active key.")
  const row = credentialByHash.get(createHash("sha256").update(secret).digest("hex"))
  if (!row) return refuse(401, "invalid_api_key", "The API key matches no active key.")
  if (row.revoked_at !== null) return refuse(401, "api_key_revoked", `The API key ${row.prefix}… was revoked.`)
  if (row.kind === "personal" && (row.m_role === null || row.m_removed_at !== null)) {
    return refuse(401, "api_key_revoked", `The API key ${row.prefix}… stopped working when its member left the organization.`)
  }
  const now = Date.now()
  if (now - (lastTouched.get(row.id) ?? 0) >= lastUsedResolutionMs) {
    lastTouched.set(row.id, now)
    touchKey.run(new Date(now).toISOString(), row.id)
  }
  if (!apiPlans.has(row.o_plan)) {
    return refuse(403, "api_disabled", `The External API is on the Pro and Agency plans; this organization is on ${row.o_plan}.`)
  }
  JSON.parse(row.o_gates) // svc reads the gates on every request too (no gate applies to these routes)
  const listed = row.scopes === "all" ? allScopes : (JSON.parse(row.scopes) as Array<string>)
  const allowed =
    listed.includes(scope) &&
    (row.kind === "organization" || (roleRank[row.m_role ?? ""] ?? -1) >= (roleRank[scopeMinimumRole[scope] ?? "admin"] ?? 2))
  if (!allowed) return refuse(403, "insufficient_scope", `This key lacks the scope '${scope}'.`)
  const author = row.kind === "personal" && row.m_email ? row.m_email : `key ${row.name} (${row.prefix}…)`
  return { keyId: row.id, organizationId: row.organization_id, plan: row.o_plan, author }
}

const toKnowledgebase = (row: KnowledgebaseRow) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  counts: { sources: row.sources_count, pages: row.pages_count }
})

const sign = (text: string): Buffer => createHmac("sha256", cursorSecret).update(text).digest().subarray(0, 16)

const listTag = (list: string): string => createHash("sha256").update(list).digest("base64url").slice(0, 12)

const encodeCursor = (list: string, position: ReadonlyArray<string>): string => {
  const payload = Buffer.from(JSON.stringify({ l: listTag(list), p: position })).toString("base64url")
  return `${payload}.${sign(`${list}\n${payload}`).toString("base64url")}`
}

const decodeCursor = (list: string, cursor: string): ReadonlyArray<string> | null => {
  const [payload, mac, extra] = cursor.split(".")
  if (!payload || !mac || extra !== undefined) return null
  const expected = sign(`${list}\n${payload}`)
  const given = Buffer.from(mac, "base64url")
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null
  try {
    const parsed = JSON.parse(Buffer.from(payload, "base64url").toString()) as { l: string; p: Array<string> }
    return parsed.l === listTag(list) && Array.isArray(parsed.p) ? parsed.p : null
  } catch {
    return null
  }
}

// ---- handlers ---------------------------------------------------------------------------------

const list = (req: IncomingMessage, res: ServerResponse, requestId: string, query: URLSearchParams): void => {
  const caller = authenticate(req, "knowledge:read")
  if (isRefusal(caller)) return fail(res, requestId, caller.status, caller.code, caller.message)
  const { organizationId } = caller
  const limitText = query.get("limit")
  const limit = limitText === null ? 50 : Number(limitText)
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
    return fail(res, requestId, 400, "invalid_request", "limit: limit must be a whole number from 1 to 200")
  }
  const listName = `knowledgebases:${organizationId}`
  const cursor = query.get("cursor")
  let rows: Array<KnowledgebaseRow>
  if (cursor === null) {
    rows = listFirst.all(organizationId, limit + 1)
  } else {
    const after = decodeCursor(listName, cursor)
    if (!after) return fail(res, requestId, 400, "invalid_request", "cursor: not a cursor of this list; start again without a cursor.")
    rows = listAfter.all(organizationId, String(after[0] ?? ""), String(after[1] ?? ""), limit + 1)
  }
  const items = rows.slice(0, limit)
  const last = items[items.length - 1]
  send(
    res,
    requestId,
    200,
    JSON.stringify({
      knowledgebases: items.map(toKnowledgebase),
      nextCursor: rows.length > limit && last ? encodeCursor(listName, [last.created_at, last.id]) : null
    })
  )
}

// Write transactions run IMMEDIATE, as svc's do: a deferred one that reads and then writes fails
// with SQLITE_BUSY_SNAPSHOT when another connection (svc's instance heartbeat) commits in between.
const createInTransaction = db.transaction((organizationId: string, plan: string, keyId: string, name: string, description: string) => {
  const cap = knowledgebaseCaps[plan] ?? 0
  if ((countKnowledgebases.get(organizationId)?.n ?? 0) >= cap) return null
  const at = new Date().toISOString()
  const id = randomUUID()
  insertKnowledgebase.run(id, organizationId, name, description, keyId, at, at)
  return { id, name, description, createdAt: at, updatedAt: at, counts: { sources: 0, pages: 0 } }
})

/** Reads a JSON object body within the size limit and hands it on; answers 413 and 400 itself. */
const readObjectBody = (req: IncomingMessage, res: ServerResponse, requestId: string, use: (body: Record<string, unknown>) => void): void => {
  const chunks: Array<Buffer> = []
  let size = 0
  req.on("data", (chunk: Buffer) => {
    size += chunk.length
    if (size <= maxBodyBytes) chunks.push(chunk)
  })
  req.on("end", () => {
    if (size > maxBodyBytes) return fail(res, requestId, 413, "payload_too_large", "The request body is over the 4.5 MB limit.")
    let body: unknown
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      return fail(res, requestId, 400, "invalid_request", "The request body is not valid JSON.")
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) return fail(res, requestId, 400, "invalid_request", "Expected an object.")
    use(body as Record<string, unknown>)
  })
}

// ---- idempotency keys (svc's table: server/platform/idempotency.ts, migration 0001) -------------

/** A stored answer: status and JSON text. */
interface StoredAnswer {
  readonly status: number
  readonly body: string
}

const createAddress = "POST /api/v1/knowledgebases"
const idempotencyWindowMs = 24 * 60 * 60_000
const storedAnswerOf = db.prepare<[string, string, string, number], { request_hash: string; status: number; body: string }>(
  `SELECT request_hash, status, body FROM idempotency_keys
    WHERE organization_id = ? AND address = ? AND key = ? AND state = 'done' AND expires_at > ?`
)
const storeAnswer = db.prepare<[string, string, string, string, number, string, number, number]>(
  `INSERT INTO idempotency_keys (organization_id, address, key, request_hash, state, status, body, created_at, expires_at)
    VALUES (?, ?, ?, ?, 'done', ?, ?, ?, ?)
    ON CONFLICT (organization_id, address, key) DO UPDATE SET request_hash = excluded.request_hash, state = 'done',
      status = excluded.status, body = excluded.body, created_at = excluded.created_at, expires_at = excluded.expires_at`
)

/** The body's fingerprint, as svc computes it: sha256 of its JSON with object keys sorted at every level. */
const requestHashOf = (body: unknown): string =>
  createHash("sha256")
    .update(
      JSON.stringify(body, (_key, v: unknown) =>
        v && typeof v === "object" && !Array.isArray(v)
          ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
          : v
      )
    )
    .digest("hex")

/** The create's answer: 201 with the Knowledgebase, or the plan cap's 403. */
const createAnswer = (organizationId: string, plan: string, keyId: string, name: string, description: string): StoredAnswer => {
  const knowledgebase = createInTransaction(organizationId, plan, keyId, name, description)
  if (knowledgebase) return { status: 201, body: JSON.stringify({ knowledgebase }) }
  const cap = knowledgebaseCaps[plan] ?? 0
  return { status: 403, body: JSON.stringify({ error: { code: "plan_limit", message: `The ${plan} plan allows ${cap} Knowledgebases; this organization has reached it.` } }) }
}

/**
 * A keyed create in one transaction: the key's stored answer replayed (`conflict` for another body),
 * or the create run and its answer stored with it.
 */
const keyedCreateInTransaction = db.transaction(
  (organizationId: string, plan: string, keyId: string, key: string, requestHash: string, name: string, description: string) => {
    const now = Date.now()
    const stored = storedAnswerOf.get(organizationId, createAddress, key, now)
    if (stored) return stored.request_hash === requestHash ? { replayed: true, answer: { status: stored.status, body: stored.body } } : null
    const answer = createAnswer(organizationId, plan, keyId, name, description)
    storeAnswer.run(organizationId, createAddress, key, requestHash, answer.status, answer.body, now, now + idempotencyWindowMs)
    return { replayed: false, answer }
  }
)

const create = (req: IncomingMessage, res: ServerResponse, requestId: string): void => {
  const caller = authenticate(req, "knowledge:write")
  if (isRefusal(caller)) {
    req.resume()
    return fail(res, requestId, caller.status, caller.code, caller.message)
  }
  const { organizationId, plan, keyId } = caller
  const key = req.headers["idempotency-key"]
  if (key !== undefined && (typeof key !== "string" || key.length < 1 || key.length > 64)) {
    req.resume()
    return fail(res, requestId, 400, "invalid_request", "Idempotency-Key must be 1 to 64 characters")
  }
  if (Number(req.headers["content-length"] ?? 0) > maxBodyBytes) {
    req.resume()
    return fail(res, requestId, 413, "payload_too_large", "The request body is over the 4.5 MB limit.")
  }
  readObjectBody(req, res, requestId, (input) => {
    const extra = Object.keys(input).find((k) => k !== "name" && k !== "description")
    if (extra !== undefined) return fail(res, requestId, 400, "invalid_request", `${extra}: is unexpected`)
    const name = typeof input.name === "string" ? input.name.trim() : null
    if (name === null || name.length < 1 || name.length > 200) {
      return fail(res, requestId, 400, "invalid_request", "name: name must be 1 to 200 characters")
    }
    const description = input.description ?? ""
    if (typeof description !== "string" || description.length > 2_000) {
      return fail(res, requestId, 400, "invalid_request", "description: description must be at most 2000 characters")
    }
    if (key !== undefined) {
      const keyed = keyedCreateInTransaction.immediate(organizationId, plan, keyId, key, requestHashOf(input), name, description)
      if (!keyed) return fail(res, requestId, 409, "conflict", "This Idempotency-Key was already used with a different request body.")
      return send(res, requestId, keyed.answer.status, keyed.answer.body, keyed.replayed ? { "idempotent-replayed": "true" } : {})
    }
    const knowledgebase = createInTransaction.immediate(organizationId, plan, keyId, name, description)
    if (!knowledgebase) {
      const cap = knowledgebaseCaps[plan] ?? 0
      return fail(res, requestId, 403, "plan_limit", `The ${plan} plan allows ${cap} Knowledgebases; this organization has reached it.`)
    }
    send(res, requestId, 201, JSON.stringify({ knowledgebase }))
  })
}

interface PageRow {
  readonly id: string
  readonly knowledgebase_id: string
  readonly parent_page_id: string | null
  readonly title: string
  readonly template_key: string
  readonly description: string
  readonly markdown: string
  readonly revision: number
  readonly created_at: string
  readonly updated_at: string
}

const knowledgebaseOf = db.prepare<[string, string], { id: string }>("SELECT id FROM knowledgebases WHERE organization_id = ? AND id = ?")
const pageOf = db.prepare<[string, string], PageRow>("SELECT * FROM pages WHERE knowledgebase_id = ? AND id = ?")
const updatePage = db.prepare("UPDATE pages SET markdown = ?, description = ?, hook = ?, revision = ?, updated_at = ? WHERE id = ?")
const insertRevision = db.prepare(
  `INSERT INTO page_revisions (id, organization_id, knowledgebase_id, page_id, number, kind, status, operation, title, description,
     markdown, author, created_at, reviewed_at) VALUES (?, ?, ?, ?, ?, 'edit', 'applied', ?, ?, ?, ?, ?, ?, NULL)`
)
const deleteLinks = db.prepare("DELETE FROM page_links WHERE page_id = ?")
const insertLink = db.prepare("INSERT INTO page_links (page_id, target_page_id) VALUES (?, ?)")
const insertChange = db.prepare(
  "INSERT INTO changes (organization_id, knowledgebase_id, object_type, object_id, change, changed_at) VALUES (?, ?, 'page', ?, 'updated', ?)"
)
const touchKnowledgebase = db.prepare("UPDATE knowledgebases SET updated_at = ? WHERE id = ?")
const hookOf = (markdown: string): string => {
  const line = markdown
    .split("\n")
    .map((l) => l.replace(/^\s{0,3}(#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)/, "").replace(/[*_`~[\]]/g, "").trim())
    .find((l) => l.length > 0 && !/^(-{3,}|={3,})$/.test(l))
  return (line ?? "").slice(0, 160)
}
const inList = (n: number) => Array.from({ length: n }, () => "?").join(", ")

const editInTransaction = db.transaction(
  (caller: Caller, knowledgebaseId: string, pageId: string, revision: number, markdown: string, description: string, operation: string) => {
    const row = pageOf.get(knowledgebaseId, pageId)
    if (!row || row.revision !== revision) return null
    const found = extractLinks(markdown)
    const titles = found.pages.length === 0
      ? []
      : (db.prepare(`SELECT id, title FROM pages WHERE knowledgebase_id = ? AND id IN (${inList(found.pages.length)})`).all(knowledgebaseId, ...found.pages) as Array<{ id: string; title: string }>)
    const names = found.sources.length === 0
      ? []
      : (db.prepare(`SELECT s.id, s.name FROM knowledgebase_sources ks JOIN sources s ON s.id = ks.source_id WHERE ks.knowledgebase_id = ? AND s.id IN (${inList(found.sources.length)})`).all(knowledgebaseId, ...found.sources) as Array<{ id: string; name: string }>)
    const links = resolveLinks(found, { pages: new Map(titles.map((t) => [t.id, t.title])), sources: new Map(names.map((n) => [n.id, n.name])) })
    const at = new Date().toISOString()
    const next = row.revision + 1
    updatePage.run(markdown, description, hookOf(markdown), next, at, row.id)
    const revisionId = randomUUID()
    insertRevision.run(revisionId, caller.organizationId, knowledgebaseId, row.id, next, operation, row.title, description, markdown, caller.author, at)
    deleteLinks.run(row.id)
    for (const page of links.pages) insertLink.run(row.id, page.id)
    insertChange.run(caller.organizationId, knowledgebaseId, row.id, at)
    touchKnowledgebase.run(at, knowledgebaseId)
    const page = {
      id: row.id,
      knowledgebaseId,
      title: row.title,
      templateKey: row.template_key,
      parentPageId: row.parent_page_id,
      createdAt: row.created_at,
      updatedAt: at,
      description,
      isFolder: row.template_key === "folder"
    }
    return { status: "applied", page, revisionId, reviewPath: null, links }
  }
)

const patchPage = (req: IncomingMessage, res: ServerResponse, requestId: string, knowledgebaseId: string, pageId: string): void => {
  const caller = authenticate(req, "knowledge:write")
  if (isRefusal(caller)) {
    req.resume()
    return fail(res, requestId, caller.status, caller.code, caller.message)
  }
  readObjectBody(req, res, requestId, (input) => {
    const body = input as { patch?: Array<PatchOperation>; description?: string }
    const patch = body.patch ?? []
    if (!Array.isArray(patch) || patch.some((op) => typeof op !== "object" || op === null || typeof op.op !== "string")) {
      return fail(res, requestId, 400, "invalid_request", "patch: expected an array of operations")
    }
    if (body.description !== undefined && typeof body.description !== "string") return fail(res, requestId, 400, "invalid_request", "description: expected a string")
    if (!knowledgebaseOf.get(caller.organizationId, knowledgebaseId)) return fail(res, requestId, 404, "not_found", `No Knowledgebase '${knowledgebaseId}' in this organization.`)
    for (let attempt = 1; attempt <= 3; attempt++) {
      const current = pageOf.get(knowledgebaseId, pageId)
      if (!current) return fail(res, requestId, 404, "not_found", `No page '${pageId}' in this Knowledgebase.`)
      const patched = patch.length === 0 ? { _tag: "Applied" as const, markdown: current.markdown } : applyPatch(current.markdown, patch)
      if (patched._tag !== "Applied") return fail(res, requestId, 400, "invalid_request", "The patch does not apply.")
      const description = body.description ?? current.description
      const operation = JSON.stringify({ kind: "edit", patch, description: body.description ?? null })
      const written = editInTransaction.immediate(caller, knowledgebaseId, pageId, current.revision, patched.markdown, description, operation)
      if (written) return send(res, requestId, 200, JSON.stringify(written))
    }
    fail(res, requestId, 400, "invalid_request", "The page kept changing while this edit was applied; send it again.")
  })
}

const pagePath = /^\/api\/v1\/knowledgebases\/([^/]+)\/pages\/([^/]+)$/

const server = createServer((req, res) => {
  const requestId = `req_${randomUUID().replace(/-/g, "")}`
  try {
    const url = req.url ?? "/"
    const q = url.indexOf("?")
    const path = q === -1 ? url : url.slice(0, q)
    if (path === "/api/v1/knowledgebases") {
      if (req.method === "GET") return list(req, res, requestId, new URLSearchParams(q === -1 ? "" : url.slice(q + 1)))
      if (req.method === "POST") return create(req, res, requestId)
    }
    const page = req.method === "PATCH" ? pagePath.exec(path) : null
    if (page) return patchPage(req, res, requestId, decodeURIComponent(page[1]!), decodeURIComponent(page[2]!))
    req.resume()
    fail(res, requestId, 404, "not_found", "No such endpoint.")
  } catch (error) {
    console.error(requestId, error)
    if (!res.headersSent) fail(res, requestId, 500, "server_error", `Something went wrong on our side (request ${requestId}).`)
  }
})

let stopping = false
const stop = () => {
  if (stopping) return
  stopping = true
  setTimeout(() => process.exit(1), 5_000).unref()
  server.close(() => {
    db.close()
    process.exit(0)
  })
  server.closeIdleConnections()
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
process.stdin.on("end", stop)
process.stdin.on("error", stop)
process.stdin.resume()

server.listen(Number(values.port), "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo
  const origin = `http://127.0.0.1:${port}`
  const ready: BaselineReady = { ready: true, pid: process.pid, origin, baseUrl: `${origin}/api/v1` }
  process.stdout.write(`${JSON.stringify(ready)}\n`)
})
