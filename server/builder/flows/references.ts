/**
 * The references of a Flow definition (`steps[i].agentId`, `steps[i].knowledgebaseIds[j]`) looked
 * up in the caller's organization: every id found nowhere in it (another organization's included)
 * and every Knowledgebase listed twice by one step is a problem naming its path.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { existingIds } from "../versions/reference-repo.js"
import { type CheckedFlow, type FlowReference, flowReferences } from "./definition.js"

const stepIndex = (problem: string): number => Number(/^steps\[(\d+)\]/.exec(problem)?.[1] ?? 0)

/** The problems of references, given the ids found in the organization, in step order. */
export const flowReferenceProblems = (
  references: ReturnType<typeof flowReferences>,
  found: { readonly knowledgebases: ReadonlySet<string>; readonly agents: ReadonlySet<string> }
): Array<string> => {
  const missing = (noun: string, ids: ReadonlySet<string>) => (reference: FlowReference) =>
    ids.has(reference.id) ? [] : [`${reference.path}: no ${noun} '${reference.id}' in this organization`]
  const firstAt = new Map<string, string>()
  const repeats = references.knowledgebaseIds.flatMap((reference) => {
    const key = `${reference.path.replace(/\[\d+\]$/, "")} ${reference.id}`
    const first = firstAt.get(key)
    if (first === undefined) {
      firstAt.set(key, reference.path)
      return []
    }
    return [`${reference.path}: '${reference.id}' is already listed at ${first}`]
  })
  const problems = [
    ...references.knowledgebaseIds.flatMap(missing("Knowledgebase", found.knowledgebases)),
    ...repeats,
    ...references.agentIds.flatMap(missing("Agent", found.agents))
  ]
  return problems.map((problem, order) => ({ problem, order, step: stepIndex(problem) })).sort((a, b) => a.step - b.step || a.order - b.order).map(({ problem }) => problem)
}

/** Looks up a checked Flow's references in the organization (on the write connection, inside the caller's transaction). */
export const referenceProblemsOf = (sql: SqlClient.SqlClient, organizationId: string, flow: CheckedFlow) =>
  Effect.gen(function* () {
    const references = flowReferences(flow)
    const ids = (list: ReadonlyArray<FlowReference>) => [...new Set(list.map((reference) => reference.id))]
    return flowReferenceProblems(references, {
      knowledgebases: yield* existingIds(sql, "knowledgebases", organizationId, ids(references.knowledgebaseIds)),
      agents: yield* existingIds(sql, "agents", organizationId, ids(references.agentIds))
    })
  })
