/**
 * A valid request body for each operation that takes one, built from two sets of ids: `own`
 * for the caller's objects and `ref` for every reference to another object the body carries.
 * The tenancy part sends `ref` = the other organization's ids (and ids that exist nowhere, to
 * compare); the crash part and the load part send their own.
 */
import type { SeededIds } from "./seed.js"

type Bodies = (own: SeededIds, ref: SeededIds) => ReadonlyArray<unknown>

const agentStep = (agentId: string) => ({ type: "agent", name: "asked", agentId, message: "{{company_name}}" })

/** Bodies by `METHOD template`; operations without a body are absent. */
export const bodies: Readonly<Record<string, Bodies>> = {
  "POST /agents": (_, r) => [{ name: "Tenancy agent", knowledgebaseIds: [r.knowledgebase] }],
  "PATCH /agents/{id}/draft": (_, r) => [{ knowledgebaseIds: [r.knowledgebase] }],
  "POST /apps": (_, r) => [{ name: "Tenancy app", agentIds: [r.agent] }],
  "PATCH /apps/{id}/draft": (_, r) => [{ agentIds: [r.agent] }],
  "POST /flows": (_, r) => [
    { name: "Tenancy flow", questions: [{ label: "Company name", type: "text" }], steps: [agentStep(r.agent)] }
  ],
  "PATCH /flows/{id}/draft": (_, r) => [{ steps: [agentStep(r.agent)] }],
  "POST /knowledgebases": () => [{ name: "Tenancy" }],
  "POST /knowledgebases/{id}/search": () => [{ query: "refunds receipts" }, { query: "refunds", kinds: ["pages"] }],
  "POST /knowledgebases/{id}/pages": (_, r) => [{ title: "Tenancy page", parentPageId: r.folder }],
  "PATCH /knowledgebases/{id}/pages/{pageId}": () => [{ patch: [{ op: "replace", oldString: "30 days", newString: "31 days" }] }],
  "POST /knowledgebases/{id}/pages/{pageId}/append": () => [{ text: "\nAppended." }],
  "POST /knowledgebases/{id}/pages/{pageId}/move": (_, r) => [{ parentPageId: r.folder }],
  "POST /knowledgebases/{id}/sources": (_, r) => [{ name: "Tenancy source", contentText: "Words.", parentPageId: r.folder }],
  "POST /knowledgebases/{id}/sources/{sourceId}/move": (_, r) => [{ parentPageId: r.folder }],
  "POST /agents/{id}/conversation": (_, r) => [{ message: "hi" }, { message: "hi", conversation_id: r.conversation }],
  "POST /agents/{id}/draft/run": () => [{ message: "hi" }],
  "POST /flows/{id}/run": (_, r) => [{ inputs: { company_name: "Acme" } }, { message: "hi", conversation_id: r.conversation }],
  "POST /flows/{id}/draft/run": () => [{ inputs: { company_name: "Acme" } }],
  "POST /apps/{id}/conversation": (_, r) => [{ message: "hi" }, { message: "hi", conversation_id: r.conversation }],
  "POST /apps/{id}/draft/run": () => [{ message: "hi" }],
  "POST /apps/{id}/transaction": () => [{ input: {} }],
  "POST /end-users": (_, r) => [
    { email: "tenancy@example.com", tierPlanIds: [r.tierPlan] },
    { email: "tenancy@example.com", groupIds: [r.group] }
  ],
  "POST /end-users/{endUserId}/subscriptions/{subscriptionId}/bonus-credits": () => [{ amount: 1, reason: "tenancy" }],
  "POST /user-groups": () => [{ name: "Tenancy group" }],
  "PATCH /user-groups/{groupId}": () => [{ description: "changed" }],
  "POST /user-groups/{groupId}/members": (_, r) => [{ endUserId: r.groupMember }, { endUserId: r.endUser }],
  "POST /user-groups/{groupId}/grants": (_, r) => [
    { targetKind: "app", targetId: r.app },
    { targetKind: "agent", targetId: r.agent },
    { targetKind: "flow", targetId: r.flow }
  ],
  "POST /portals/{id}/admissions": (_, r) => [{ groupId: r.group }]
}

/** The bodies of `method template` (one `undefined` when it takes none). */
export const bodiesOf = (method: string, template: string, own: SeededIds, ref: SeededIds): ReadonlyArray<unknown> =>
  bodies[`${method} ${template}`]?.(own, ref) ?? [undefined]
