/**
 * Reference checks for authoring: every id a body names (`knowledgebaseIds`, `flowIds`,
 * `agentIds`) must be an item of the caller's organization; ids of another organization are
 * missing. Every problem is named at once, before anything is written.
 */
import { Effect } from "effect"
import { InvalidRequest } from "../../platform/errors.js"

/** One list of references in a body. */
export interface ReferenceList {
  /** The body property, e.g. `knowledgebaseIds`. */
  readonly field: string
  /** What its ids name, e.g. `Knowledgebase`. */
  readonly noun: string
  readonly ids: ReadonlyArray<string>
  /** The ids found in the caller's organization. */
  readonly found: ReadonlySet<string>
}

/** The problems of reference lists, in body order: ids found nowhere in the organization, and repeats. */
export const referenceProblems = (lists: ReadonlyArray<ReferenceList>): Array<string> =>
  lists.flatMap(({ field, noun, ids, found }) =>
    ids.flatMap((id, index) => {
      if (!found.has(id)) return [`${field}[${index}]: no ${noun} '${id}' in this organization`]
      const first = ids.indexOf(id)
      return first < index ? [`${field}[${index}]: '${id}' is already listed at ${field}[${first}]`] : []
    })
  )

/** Fails with `invalid_request` naming every problem, if there is any. */
export const refuseProblems = (problems: ReadonlyArray<string>): Effect.Effect<void, InvalidRequest> =>
  problems.length === 0 ? Effect.void : Effect.fail(new InvalidRequest({ message: `${problems.join("; ")}.` }))

/** One list of members to pin, with what the organization holds of them. */
export interface MemberList {
  readonly field: string
  readonly noun: string
  readonly ids: ReadonlyArray<string>
  readonly versions: ReadonlyMap<string, number | null>
}

/** The problems of pinning members: missing ones and never-published ones, every one named. */
export const pinProblems = (lists: ReadonlyArray<MemberList>): Array<string> =>
  lists.flatMap(({ field, noun, ids, versions }) =>
    ids.flatMap((id, index) => {
      if (!versions.has(id)) return [`${field}[${index}]: no ${noun} '${id}' in this organization`]
      return versions.get(id) === null ? [`${field}[${index}]: ${noun} '${id}' was never published; publish it first`] : []
    })
  )
