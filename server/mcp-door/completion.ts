/**
 * Completion of an id (MCP `completion/complete`): the ids of the candidates a typed value points
 * at, best first. A value matches a candidate's name (or slug) from its start, its id from its
 * start, or its name anywhere, in that order of rank, ignoring case; within a rank by name (then
 * in the order given); an empty value matches every candidate. The values are ids, since the arguments completed are ids (which
 * also take exact names): names only help find them.
 */
import type { Named } from "./resolve.js"

/** How well `value` (lower-cased, trimmed) names `candidate`: lower is better, null not at all. */
const rankOf = (value: string, candidate: Named): number | null => {
  if (value === "") return 0
  const name = candidate.name.toLowerCase()
  if (name.startsWith(value) || (candidate.slug !== undefined && candidate.slug.toLowerCase().startsWith(value))) return 0
  if (candidate.id.toLowerCase().startsWith(value)) return 1
  if (name.includes(value)) return 2
  return null
}

/** The ids of the candidates `value` matches, best first, each once. */
export const completedIds = (value: string, candidates: ReadonlyArray<Named>): Array<string> => {
  const wanted = value.trim().toLowerCase()
  const ranked: Array<{ readonly id: string; readonly rank: number; readonly name: string; readonly at: number }> = []
  candidates.forEach((candidate, at) => {
    const rank = rankOf(wanted, candidate)
    if (rank !== null) ranked.push({ id: candidate.id, rank, name: candidate.name.toLowerCase(), at })
  })
  ranked.sort((a, b) => a.rank - b.rank || (a.name < b.name ? -1 : a.name > b.name ? 1 : a.at - b.at))
  return [...new Set(ranked.map((entry) => entry.id))]
}
