/**
 * The crash part's writers: each loops over writes of every kind (Knowledgebase create, page
 * create and patch, source upload, Agent/Flow/App create and publish, end-user provisioning, group
 * member add, runs that charge credits, idempotent creates with keys) until told to stop, and
 * records every acknowledged one in the ledger. A refused connection (the server is down) is
 * retried: the request never reached a server.
 */
import type { SoakClient } from "./http.js"
import type { Ledger } from "./crash-ledger.js"

/** What the writers write into (made before the first kill). */
export interface CrashTargets {
  readonly key: string
  readonly knowledgebase: string
  readonly agent: string
  readonly tierPlan: string
  readonly group: string
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Knowledgebases the writers may create together (the Agency plan's cap is 200). */
const knowledgebaseBudget = { left: 150 }

/** Runs writer `n` until `stopped()`; page patches of its own pages only, so each page's content is known. */
export const runWriter = async (n: number, client: SoakClient, targets: CrashTargets, ledger: Ledger, stopped: () => boolean) => {
  let sequence = 0
  const pages: Array<{ kb: string; id: string; marker: number }> = []
  const endUsers: Array<string> = []

  /** Sends a write; its JSON when acknowledged, null otherwise (recorded). */
  const write = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<any | null> => {
    for (;;) {
      const answer = await client.send({ method, path: `/api/v1${path}`, headers: { authorization: `Bearer ${targets.key}`, ...headers }, body })
      if (!answer.ok) {
        if (/ECONNREFUSED/.test(answer.error) && !stopped()) {
          await sleep(25)
          continue
        }
        ledger.unknown++
        return null
      }
      if (answer.status >= 500) ledger.serverErrors.push(`${method} ${path}: ${answer.status} ${answer.text.slice(0, 200)}`)
      else if (answer.status >= 400) ledger.refused.push(`${method} ${path}: ${answer.status} ${answer.text.slice(0, 200)}`)
      return answer.status < 300 ? answer.json : null
    }
  }

  const kinds = [
    async () => {
      const title = `w${n} page ${++sequence}`
      const body = `# ${title}\n\n${"Words of the page. ".repeat(1 + (sequence % 40))}\n\nmarker: m0\n`
      const made = await write("POST", `/knowledgebases/${targets.knowledgebase}/pages`, { title, bodyMarkdown: body })
      if (made) {
        ledger.ack({ kind: "page", kb: targets.knowledgebase, id: made.page.id, title, body })
        pages.push({ kb: targets.knowledgebase, id: made.page.id, marker: 0 })
      }
    },
    async () => {
      const page = pages[sequence++ % Math.max(1, pages.length)]
      if (!page) return
      const next = page.marker + 1
      const patch = [{ op: "replace", oldString: `marker: m${page.marker}`, newString: `marker: m${next}` }]
      const done = await write("PATCH", `/knowledgebases/${page.kb}/pages/${page.id}`, { patch })
      if (done) {
        page.marker = next
        ledger.ack({ kind: "page patch", kb: page.kb, id: page.id, marker: `m${next}` })
      } else {
        // fate unknown: either marker may be there; the page is patched no more
        ledger.maybeMarkers.set(page.id, `m${next}`)
        pages.splice(pages.indexOf(page), 1)
      }
    },
    async () => {
      if (knowledgebaseBudget.left-- <= 0) return
      const name = `w${n} kb ${++sequence}`
      const made = await write("POST", "/knowledgebases", { name })
      if (made) ledger.ack({ kind: "knowledgebase", id: made.knowledgebase.id, name })
    },
    async () => {
      const name = `w${n} source ${++sequence}`
      const made = await write("POST", `/knowledgebases/${targets.knowledgebase}/sources`, { name, contentText: `${name}: receipts are kept for ${sequence} years.` })
      if (made) ledger.ack({ kind: "source", kb: targets.knowledgebase, id: made.source.id, name })
    },
    async () => {
      for (const kind of ["agent", "flow", "app"] as const) {
        const name = `w${n} ${kind} ${++sequence}`
        const body =
          kind === "agent"
            ? { name, instructions: `Answer as ${name}.` }
            : kind === "flow"
              ? { name, questions: [], steps: [{ type: "template", name: "echo", template: "{{message}}" }] }
              : { name, agentIds: [targets.agent] }
        const made = await write("POST", `/${kind}s`, body)
        if (!made) continue
        const id = made[kind].id as string
        const published = (await write("POST", `/${kind}s/${id}/publish`, undefined)) !== null
        ledger.ack({ kind, id, name, published })
      }
    },
    async () => {
      const email = `w${n}-${++sequence}@crash.test`
      const made = await write("POST", "/end-users", { email, tierPlanIds: [targets.tierPlan] })
      if (made) {
        ledger.ack({ kind: "end user", id: made.endUser.id, email, subscription: made.subscriptions[0].id })
        endUsers.push(made.endUser.id)
      }
    },
    async () => {
      const endUser = endUsers.shift()
      if (!endUser) return
      if (await write("POST", `/user-groups/${targets.group}/members`, { endUserId: endUser })) {
        ledger.ack({ kind: "group member", group: targets.group, endUser })
      }
    },
    async () => {
      const turn = await write("POST", `/agents/${targets.agent}/conversation`, { message: `refunds ${++sequence}` })
      if (turn) ledger.ack({ kind: "run", execution: turn.executionId })
    },
    async () => {
      const key = `w${n}-${++sequence}`
      const body = { name: `w${n} keyed group ${sequence}` }
      const made = await write("POST", "/user-groups", body, { "idempotency-key": key })
      if (made) ledger.ack({ kind: "idempotent create", key, body, id: made.group.id })
    }
  ]
  const weights = [3, 4, 1, 2, 1, 1, 1, 2, 1]
  const schedule = weights.flatMap((weight, index) => Array.from({ length: weight }, () => index))
  for (let turn = n; !stopped(); turn++) await kinds[schedule[turn % schedule.length]!]!()
}
