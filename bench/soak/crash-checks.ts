/**
 * The crash part's checks afterwards: every acknowledged write read back whole through the API,
 * and (on SQLite) the data file itself: `integrity_check`, `foreign_key_check`, and rows that
 * only make sense with another (a published version without its body, a processing source without
 * its job, credits charged that no execution accounts for).
 */
import Database from "better-sqlite3"
import type { Acknowledged, Ledger } from "./crash-ledger.js"
import type { SoakClient } from "./http.js"

/** One acknowledged write not found whole. */
export interface Lost {
  readonly write: string
  readonly why: string
}

const get = async (client: SoakClient, key: string, path: string) => {
  const answer = await client.send({ method: "GET", path: `/api/v1${path}`, headers: { authorization: `Bearer ${key}` } })
  return answer.ok ? answer : { ok: true as const, status: 0, headers: {}, text: answer.error, json: undefined }
}

/** Reads every acknowledged write back; answers those missing or not whole. */
export const checkAcknowledged = async (client: SoakClient, key: string, ledger: Ledger): Promise<Array<Lost>> => {
  const lost: Array<Lost> = []
  const miss = (write: Acknowledged, why: string) => lost.push({ write: JSON.stringify(write).slice(0, 300), why })
  const lastMarker = new Map<string, string>()
  for (const write of ledger.acknowledged) if (write.kind === "page patch") lastMarker.set(write.id, write.marker)
  for (const write of ledger.acknowledged) {
    switch (write.kind) {
      case "knowledgebase": {
        const answer = await get(client, key, `/knowledgebases/${write.id}`)
        if (answer.status !== 200 || answer.json?.knowledgebase?.name !== write.name) miss(write, `${answer.status} ${answer.text.slice(0, 200)}`)
        break
      }
      case "page": {
        const answer = await get(client, key, `/knowledgebases/${write.kb}/pages/${write.id}`)
        const allowed = [lastMarker.get(write.id) ?? "m0", ledger.maybeMarkers.get(write.id)].filter((m): m is string => m !== undefined)
        const bodies = allowed.map((marker) => write.body.replace("marker: m0", `marker: ${marker}`))
        const page = answer.json?.page
        if (answer.status !== 200 || page?.title !== write.title || !bodies.includes(page?.markdown)) {
          miss(write, `${answer.status}: body ${JSON.stringify(String(page?.markdown).slice(-40))}, expected one of ${allowed.join(", ")}`)
        }
        break
      }
      case "source": {
        const answer = await get(client, key, `/knowledgebases/${write.kb}/sources/${write.id}`)
        if (answer.status !== 200 || answer.json?.source?.name !== write.name) miss(write, `${answer.status} ${answer.text.slice(0, 200)}`)
        break
      }
      case "agent":
      case "flow":
      case "app": {
        const draft = await get(client, key, `/${write.kind}s/${write.id}/draft`)
        if (draft.status !== 200 || !draft.text.includes(JSON.stringify(write.name))) miss(write, `draft: ${draft.status} ${draft.text.slice(0, 200)}`)
        if (write.published) {
          const published = await get(client, key, `/${write.kind}s/${write.id}`)
          if (published.status !== 200 || !published.text.includes(JSON.stringify(write.name))) miss(write, `published: ${published.status} ${published.text.slice(0, 200)}`)
        }
        break
      }
      case "end user": {
        const answer = await get(client, key, `/end-users/${write.id}`)
        if (answer.status !== 200 || !answer.text.includes(write.email) || !answer.text.includes(write.subscription)) miss(write, `${answer.status} ${answer.text.slice(0, 200)}`)
        break
      }
      case "group member": {
        const answer = await get(client, key, `/end-users/${write.endUser}`)
        if (answer.status !== 200 || !(answer.json?.endUser?.groupIds ?? []).includes(write.group)) miss(write, `${answer.status} ${answer.text.slice(0, 200)}`)
        break
      }
      case "run": {
        const answer = await get(client, key, `/executions/${write.execution}`)
        if (answer.status !== 200) miss(write, `${answer.status} ${answer.text.slice(0, 200)}`)
        break
      }
      case "idempotent create": {
        const again = await client.send({
          method: "POST",
          path: "/api/v1/user-groups",
          headers: { authorization: `Bearer ${key}`, "idempotency-key": write.key },
          body: write.body
        })
        if (!again.ok || again.status >= 300 || again.json?.group?.id !== write.id) miss(write, `replay: ${again.ok ? `${again.status} ${again.text.slice(0, 200)}` : again.error}`)
        break
      }
      case "page patch":
        break
    }
  }
  return lost
}

/** Waits (at most `maxMs`) until no acknowledged source is still processing; answers the statuses. */
export const settleSources = async (client: SoakClient, key: string, ledger: Ledger, maxMs: number): Promise<Record<string, number>> => {
  const deadline = Date.now() + maxMs
  for (;;) {
    const statuses: Record<string, number> = {}
    for (const write of ledger.acknowledged) {
      if (write.kind !== "source") continue
      const status = String((await get(client, key, `/knowledgebases/${write.kb}/sources/${write.id}`)).json?.source?.status)
      statuses[status] = (statuses[status] ?? 0) + 1
    }
    if (!statuses.processing || Date.now() > deadline) return statuses
    await new Promise((resolve) => setTimeout(resolve, 1_000))
  }
}

/** Half-written rows found in a SQLite data file (empty when whole). */
export const sqliteHalfWritten = (file: string, organizationId: string, startingCredits: number): Array<string> => {
  const db = new Database(file, { readonly: true })
  try {
    const problems: Array<string> = []
    const integrity = db.pragma("integrity_check", { simple: true })
    if (integrity !== "ok") problems.push(`integrity_check: ${String(integrity)}`)
    const foreign = db.pragma("foreign_key_check") as Array<unknown>
    if (foreign.length > 0) problems.push(`foreign_key_check: ${foreign.length} rows, first ${JSON.stringify(foreign[0])}`)
    const count = (label: string, sql: string, ...params: Array<unknown>) => {
      const n = Number((db.prepare(sql).get(...params) as { n: number }).n)
      if (n > 0) problems.push(`${label}: ${n}`)
    }
    for (const [table, versions, column] of [["agents", "agent_versions", "agent_id"], ["flows", "flow_versions", "flow_id"], ["apps", "app_versions", "app_id"]]) {
      count(
        `${table} published without their version`,
        `SELECT COUNT(*) AS n FROM ${table} t WHERE t.published_version IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM ${versions} v WHERE v.${column} = t.id AND v.version = t.published_version)`
      )
    }
    count("pages of no Knowledgebase", "SELECT COUNT(*) AS n FROM pages p WHERE NOT EXISTS (SELECT 1 FROM knowledgebases k WHERE k.id = p.knowledgebase_id)")
    count("subscriptions of no end user", "SELECT COUNT(*) AS n FROM subscriptions s WHERE NOT EXISTS (SELECT 1 FROM end_users e WHERE e.id = s.end_user_id)")
    count("group members of no group", "SELECT COUNT(*) AS n FROM group_members m WHERE NOT EXISTS (SELECT 1 FROM user_groups g WHERE g.id = m.group_id)")
    count(
      "sources processing without an ingestion job",
      "SELECT COUNT(*) AS n FROM sources s WHERE s.status = 'processing' AND NOT EXISTS (SELECT 1 FROM ingestion_jobs j WHERE j.source_id = s.id)"
    )
    const credits = db
      .prepare(
        `SELECT o.credits_used AS used, o.credits_remaining AS remaining,
           (SELECT COALESCE(SUM(e.credits_charged), 0) FROM executions e WHERE e.organization_id = o.id) AS charged
         FROM organizations o WHERE o.id = ?`
      )
      .get(organizationId) as { used: number; remaining: number; charged: number }
    if (credits.used !== credits.charged) problems.push(`credits used ${credits.used} but executions charged ${credits.charged}`)
    if (credits.used + credits.remaining !== startingCredits) problems.push(`credits used ${credits.used} + remaining ${credits.remaining} != ${startingCredits}`)
    return problems
  } finally {
    db.close()
  }
}
