/**
 * Tenancy part: two organizations with objects of every kind; every operation of the OpenAPI
 * document called by organization A (its organization key and an admin's personal key) with
 * organization B's ids in every slot: each path parameter in turn (the rest A's), all of them at
 * once, every id a body carries, the id-like query parameters and B's list cursors. Each request
 * is paired with the same request naming ids that exist nowhere: B's objects must be
 * indistinguishable from those (same status, same error code and message up to the id), never 2xx
 * touching B's object, and no answer may show anything of B's. B's objects are read before and
 * after and must be unchanged.
 */
import { randomUUID } from "node:crypto"
import type { Child } from "../children.js"
import { bodiesOf } from "./bodies.js"
import { fillPath, type Operation, readOperations, slotKind } from "./document.js"
import { SoakClient } from "./http.js"
import type { SoakOrganization, SoakReady } from "./protocol.js"
import { type SeededIds, seedOrganization } from "./seed.js"

/** One request that told A something about B, or touched B. */
export interface Leak {
  readonly request: string
  readonly key: "organization" | "personal"
  readonly why: string
  readonly answer: string
}

/** What the tenancy part measured. */
export interface TenancyResult {
  readonly operations: number
  readonly operationsCalled: number
  readonly requests: number
  readonly leaks: ReadonlyArray<Leak>
  /** Statuses of the requests naming B's ids. */
  readonly statuses: Readonly<Record<string, number>>
  /** Statuses of the requests naming no ids (lists and creates, checked for the other's content). */
  readonly statusesWithoutIds: Readonly<Record<string, number>>
  /** Differences found in B's objects afterwards (empty when unchanged). */
  readonly changed: ReadonlyArray<string>
}

interface Variant {
  readonly label: string
  /** False for the requests that name no ids at all (lists, creates): only checked for showing the other's content. */
  readonly namesOther: boolean
  readonly method: string
  readonly path: (ids: SeededIds) => string
  readonly body: (ids: SeededIds) => unknown
}

/** The ids of a twin whose cursor is made up (set per request, see `variantsOf`). */
let nowhereCursorIds: SeededIds | null = null

const nowhereIds = (): SeededIds => {
  const ids: Record<string, string> = {}
  for (const kind of [
    "knowledgebase", "folder", "page", "source", "review", "agent", "flow", "app", "conversation", "execution",
    "endUser", "subscription", "group", "groupMember", "groupGrant", "portal", "tierPlan"
  ]) ids[kind] = randomUUID()
  return ids as unknown as SeededIds
}

/** The requests of one operation that carry the other organization's ids (`other` is a parameter, so the twin can name ids that exist nowhere). */
const variantsOf = (op: Operation, own: SeededIds, otherCursors: ReadonlyMap<string, string>): Array<Variant> => {
  const variants: Array<Variant> = []
  const cursor = otherCursors.get(op.template)
  if (op.method === "GET" && cursor !== undefined) {
    variants.push({
      label: `GET ${op.template} ?cursor of the other's list`,
      namesOther: true,
      method: "GET",
      // the twin sends a well-formed cursor that no list issued
      path: (other) => `${fillPath(op.template, (p) => own[slotKind(op.template, p)])}?limit=1&cursor=${encodeURIComponent(other === nowhereCursorIds ? Buffer.from(cursor).reverse().toString("base64url") : cursor)}`,
      body: () => undefined
    })
  }
  const count = bodiesOf(op.method, op.template, own, own).length
  for (let i = 0; i < count; i++) {
    const ownBody = bodiesOf(op.method, op.template, own, own)[i]
    const label = (what: string) => `${op.method} ${op.template} ${what}${count > 1 ? ` (body ${i + 1})` : ""}`
    for (const param of op.params) {
      variants.push({
        label: label(`{${param}} of the other`),
        namesOther: true,
        method: op.method,
        path: (other) => fillPath(op.template, (p) => (p === param ? other : own)[slotKind(op.template, p)]),
        body: () => ownBody
      })
    }
    if (op.params.length > 1) {
      variants.push({
        label: label("every path id of the other"),
        namesOther: true,
        method: op.method,
        path: (other) => fillPath(op.template, (p) => other[slotKind(op.template, p)]),
        body: () => ownBody
      })
    }
    if (JSON.stringify(bodiesOf(op.method, op.template, own, nowhereIds())[i]) !== JSON.stringify(ownBody)) {
      variants.push({
        label: label("body references of the other"),
        namesOther: true,
        method: op.method,
        path: () => fillPath(op.template, (p) => own[slotKind(op.template, p)]),
        body: (other) => bodiesOf(op.method, op.template, own, other)[i]
      })
    }
  }
  if (op.method === "GET" && op.template === "/knowledgebases/{id}/pages") {
    variants.push({
      label: "GET /knowledgebases/{id}/pages ?parentPageId of the other",
      namesOther: true,
      method: "GET",
      path: (other) => `${fillPath(op.template, () => own.knowledgebase)}?parentPageId=${other.folder}`,
      body: () => undefined
    })
  }
  if (variants.length === 0) {
    variants.push({
      label: `${op.method} ${op.template} (no ids: nothing of the other may show)`,
      namesOther: false,
      method: op.method,
      path: () => fillPath(op.template, (p) => own[slotKind(op.template, p)]),
      body: () => bodiesOf(op.method, op.template, own, own)[0]
    })
  }
  return variants
}

/** A `nextCursor` of each list of the other organization (read with `limit=1`), by template. */
const listCursors = async (client: SoakClient, key: string, operations: ReadonlyArray<Operation>, ids: SeededIds): Promise<Map<string, string>> => {
  const cursors = new Map<string, string>()
  for (const op of operations) {
    if (op.method !== "GET" || !(op.operation.parameters ?? []).some((p: any) => p.name === "cursor")) continue
    const answer = await client.send({ method: "GET", path: `${fillPath(op.template, (p) => ids[slotKind(op.template, p)])}?limit=1`, headers: { authorization: `Bearer ${key}` } })
    if (answer.ok && typeof answer.json?.nextCursor === "string") cursors.set(op.template, answer.json.nextCursor)
  }
  return cursors
}

/** Reads every object of `ids` with `key`: the snapshot compared before and after. */
const snapshot = async (client: SoakClient, key: string, ids: SeededIds, portalId: string): Promise<Record<string, string>> => {
  const kb = `/knowledgebases/${ids.knowledgebase}`
  const paths = [
    kb, `${kb}/pages`, `${kb}/pages/${ids.page}`, `${kb}/pages/${ids.folder}`, `${kb}/pages/${ids.page}/revisions`,
    `${kb}/sources`, `${kb}/sources/${ids.source}`, `${kb}/reviews/${ids.review}`,
    `/agents/${ids.agent}`, `/agents/${ids.agent}/draft`, `/flows/${ids.flow}`, `/flows/${ids.flow}/draft`,
    `/apps/${ids.app}`, `/apps/${ids.app}/draft`, `/conversations/${ids.conversation}`,
    `/conversations/${ids.conversation}/messages`, `/executions/${ids.execution}`,
    `/end-users/${ids.endUser}`, `/end-users/${ids.groupMember}`, `/end-users`, `/user-groups/${ids.group}`, `/user-groups`,
    `/portals/${portalId}/admissions`, "/knowledgebases", "/agents?include=drafts", "/flows?include=drafts", "/apps?include=drafts"
  ]
  const seen: Record<string, string> = {}
  for (const path of paths) {
    const answer = await client.send({ method: "GET", path: `/api/v1${path}`, headers: { authorization: `Bearer ${key}` } })
    seen[path] = answer.ok ? `${answer.status} ${answer.text}` : answer.error
  }
  return seen
}

/** What a judged pair of answers is: status, body text and parsed JSON. */
export interface TwinAnswer {
  readonly status: number
  readonly text: string
  readonly json: any
}

/**
 * Why the answer to a request naming the other organization's ids (`foreign`) tells something or
 * touched something, judged against the same request naming ids that exist nowhere (`twin`); null
 * when the two cannot be told apart. `otherMarker` is text only the other's objects contain.
 */
export const judgeTwins = (
  foreign: TwinAnswer,
  twin: TwinAnswer,
  names: { readonly otherIds: ReadonlyArray<string>; readonly nowhereIds: ReadonlyArray<string>; readonly otherMarker: string }
): string | null => {
  if (normalised(foreign.text, names.otherIds).includes(names.otherMarker) || twin.text.includes(names.otherMarker)) {
    return "shows the other organization's content"
  }
  if (foreign.status !== twin.status) return `answered ${foreign.status} where an id that exists nowhere answers ${twin.status}`
  if (foreign.status >= 300) {
    const [x, y] = [foreign.json?.error, twin.json?.error]
    if (x?.code !== y?.code || normalised(String(x?.message), names.otherIds) !== normalised(String(y?.message), names.nowhereIds)) {
      return `error differs from an id that exists nowhere (${y?.code}: ${y?.message})`
    }
    return null
  }
  if (mentions(foreign.text, names.otherIds) > mentions(twin.text, names.nowhereIds)) return "a success that shows or took the other organization's object"
  return null
}

const mentions = (text: string, ids: ReadonlyArray<string>): number => ids.reduce((n, id) => n + text.split(id).length - 1, 0)

const normalised = (text: string, ids: ReadonlyArray<string>): string => ids.reduce((t, id) => t.split(id).join("<id>"), text)

/** Runs the tenancy part against a fresh server. */
export const runTenancy = async (server: Child<SoakReady>): Promise<TenancyResult> => {
  const orgs = server.ready.organizations
  if (!orgs) throw new Error("tenancy needs a fresh server")
  const client = new SoakClient(server.ready.origin, 4)
  try {
    const a = await seedOrganization(client, server, orgs.a)
    const b = await seedOrganization(client, server, orgs.b)
    const bIds = Object.values(b)
    const before = await snapshot(client, orgs.b.orgKey, b, orgs.b.portalId)
    const { operations } = await readOperations(client)
    const leaks: Array<Leak> = []
    const statuses: Record<string, number> = {}
    const statusesWithoutIds: Record<string, number> = {}
    const otherCursors = await listCursors(client, orgs.b.orgKey, operations, b)
    const called = new Set<string>()
    let requests = 0
    const keys: ReadonlyArray<[Leak["key"], string]> = [["organization", orgs.a.orgKey], ["personal", orgs.a.personalKey]]
    for (const op of operations) {
      for (const variant of variantsOf(op, a, otherCursors)) {
        for (const [keyName, key] of keys) {
          const nowhere = nowhereIds()
          nowhereCursorIds = nowhere
          const nowhereList = Object.values(nowhere)
          const send = (ids: SeededIds) =>
            client.send({ method: variant.method, path: variant.path(ids), headers: { authorization: `Bearer ${key}` }, body: variant.body(ids) })
          const foreign = await send(b)
          const twin = await send(nowhere)
          requests += 2
          called.add(`${op.method} ${op.template}`)
          const leak = (why: string, answer: string) => leaks.push({ request: variant.label, key: keyName, why, answer: answer.slice(0, 500) })
          if (!foreign.ok || !twin.ok) {
            leak("connection failed", foreign.ok ? (twin.ok ? "" : twin.error) : foreign.error)
            continue
          }
          const tally = variant.namesOther ? statuses : statusesWithoutIds
          tally[foreign.status] = (tally[foreign.status] ?? 0) + 1
          const why = judgeTwins(foreign, twin, { otherIds: bIds, nowhereIds: nowhereList, otherMarker: orgs.b.slug })
          if (why !== null) leak(why, foreign.text)
        }
      }
    }
    const after = await snapshot(client, orgs.b.orgKey, b, orgs.b.portalId)
    const changed = Object.keys(before).filter((path) => before[path] !== after[path])
    return { operations: operations.length, operationsCalled: called.size, requests, leaks, statuses, statusesWithoutIds, changed }
  } finally {
    await client.close()
  }
}

/** Prints the figures of a tenancy run; answers whether it passed. */
export const reportTenancy = (result: TenancyResult): boolean => {
  console.log(`tenancy: ${result.operationsCalled}/${result.operations} operations, ${result.requests} requests (half naming the other organization's ids, half ids that exist nowhere)`)
  console.log(`tenancy: statuses of the requests naming the other's ids: ${JSON.stringify(result.statuses)}`)
  console.log(`tenancy: statuses of the requests naming no ids (lists, creates): ${JSON.stringify(result.statusesWithoutIds)}`)
  console.log(`tenancy: leaks ${result.leaks.length}; the other's objects changed: ${result.changed.length}`)
  for (const leak of result.leaks.slice(0, 30)) console.log(`  LEAK ${leak.request} [${leak.key} key]: ${leak.why}\n    ${leak.answer}`)
  for (const path of result.changed) console.log(`  CHANGED ${path}`)
  return result.leaks.length === 0 && result.changed.length === 0 && result.operationsCalled === result.operations
}
