/**
 * The crash part's checks afterwards: every acknowledged write read back whole through the API,
 * and the database itself: on SQLite `integrity_check` and `foreign_key_check`; on both, rows that
 * only make sense with another (a published version without its body, a processing source without
 * its job, credits charged that no execution accounts for) and runs left running.
 */
import Database from "better-sqlite3"
import pg from "pg"
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

/** A check of rows that only make sense with another: a label and a `SELECT COUNT(*) AS n …` that must be 0. */
const orphanChecks: ReadonlyArray<readonly [string, string]> = [
  ...[["agents", "agent_versions", "agent_id"], ["flows", "flow_versions", "flow_id"], ["apps", "app_versions", "app_id"]].map(
    ([table, versions, column]) =>
      [
        `${table} published without their version`,
        `SELECT COUNT(*) AS n FROM ${table} t WHERE t.published_version IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM ${versions} v WHERE v.${column} = t.id AND v.version = t.published_version)`
      ] as const
  ),
  ["pages of no Knowledgebase", "SELECT COUNT(*) AS n FROM pages p WHERE NOT EXISTS (SELECT 1 FROM knowledgebases k WHERE k.id = p.knowledgebase_id)"],
  ["subscriptions of no end user", "SELECT COUNT(*) AS n FROM subscriptions s WHERE NOT EXISTS (SELECT 1 FROM end_users e WHERE e.id = s.end_user_id)"],
  ["group members of no group", "SELECT COUNT(*) AS n FROM group_members m WHERE NOT EXISTS (SELECT 1 FROM user_groups g WHERE g.id = m.group_id)"],
  [
    "sources processing without an ingestion job",
    "SELECT COUNT(*) AS n FROM sources s WHERE s.status = 'processing' AND NOT EXISTS (SELECT 1 FROM ingestion_jobs j WHERE j.source_id = s.id)"
  ],
  ["runs left running", "SELECT COUNT(*) AS n FROM executions e WHERE e.status = 'running'"]
]

/** The organization's credits: used, remaining, and what its executions were charged. */
const creditsSql = `SELECT o.credits_used AS used, o.credits_remaining AS remaining,
    (SELECT COALESCE(SUM(e.credits_charged), 0) FROM executions e WHERE e.organization_id = o.id) AS charged
  FROM organizations o WHERE o.id = $1`

/** Problems with an organization's credits: used must be what executions were charged, and used + remaining the start. */
const creditProblems = (credits: { used: unknown; remaining: unknown; charged: unknown }, startingCredits: number): Array<string> => {
  const [used, remaining, charged] = [Number(credits.used), Number(credits.remaining), Number(credits.charged)]
  const problems: Array<string> = []
  if (used !== charged) problems.push(`credits used ${used} but executions charged ${charged}`)
  if (used + remaining !== startingCredits) problems.push(`credits used ${used} + remaining ${remaining} != ${startingCredits}`)
  return problems
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
    for (const [label, sql] of orphanChecks) {
      const n = Number((db.prepare(sql).get() as { n: number }).n)
      if (n > 0) problems.push(`${label}: ${n}`)
    }
    const credits = db.prepare(creditsSql.replace("$1", "?")).get(organizationId) as { used: number; remaining: number; charged: number }
    return [...problems, ...creditProblems(credits, startingCredits)]
  } finally {
    db.close()
  }
}

/**
 * The same checks on a PostgreSQL database (its own constraints stand for SQLite's
 * `integrity_check` and `foreign_key_check`), made while its instances may still be serving:
 * runs left running are waited for, up to `settleMs`, since the survivors take over a killed
 * instance's runs once its lease has run out.
 */
export const postgresHalfWritten = async (url: string, organizationId: string, startingCredits: number, settleMs: number): Promise<Array<string>> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const deadline = Date.now() + settleMs
    const count = async (sql: string) => Number(((await client.query(sql)).rows[0] as { n: unknown }).n)
    while ((await count("SELECT COUNT(*) AS n FROM executions e WHERE e.status = 'running'")) > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    const problems: Array<string> = []
    for (const [label, sql] of orphanChecks) {
      const n = await count(sql)
      if (n > 0) problems.push(`${label}: ${n}`)
    }
    const credits = (await client.query(creditsSql, [organizationId])).rows[0] as { used: unknown; remaining: unknown; charged: unknown }
    return [...problems, ...creditProblems(credits, startingCredits)]
  } finally {
    await client.end()
  }
}
