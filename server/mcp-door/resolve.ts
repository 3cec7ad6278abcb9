/**
 * Id arguments also take the object's exact name (or slug): an id passes through untouched (the
 * service answers `not_found` as REST does); a name matching one object becomes its id; a name two
 * objects share is refused listing both with their ids; a name matching nothing is `not_found`
 * naming up to five near matches. The ids a call's arguments resolve to are noted for the call
 * (`resolvedArguments`), so what its answer names can be linked (`resource-links.ts`).
 */
import { Effect, FiberRef } from "effect"
import { InvalidRequest, NotFound } from "../platform/errors.js"

/** Something an id argument may name. */
export interface Named {
  readonly id: string
  readonly name: string
  readonly slug?: string | undefined
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** How many near matches a miss names. */
export const nearMatchesShown = 5

/** Edit distance between two short strings (case-insensitive). */
const distance = (a: string, b: string): number => {
  const x = a.toLowerCase()
  const y = b.toLowerCase()
  let previous = Array.from({ length: y.length + 1 }, (_, i) => i)
  for (let i = 1; i <= x.length; i++) {
    const current = [i]
    for (let j = 1; j <= y.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[y.length]!
}

/** Up to five candidates closest to `given`: containing it (either way) first, then by edit distance. */
export const nearMatches = (given: string, candidates: ReadonlyArray<Named>): ReadonlyArray<Named> => {
  const lower = given.toLowerCase()
  const scored = candidates.map((candidate) => {
    const name = candidate.name.toLowerCase()
    const contains = name.includes(lower) || lower.includes(name)
    return { candidate, score: (contains ? 0 : 1000) + distance(given, candidate.name) }
  })
  const threshold = Math.max(3, Math.ceil(given.length / 2))
  return scored
    .filter(({ score }) => score < 1000 || score - 1000 <= threshold)
    .sort((a, b) => a.score - b.score)
    .slice(0, nearMatchesShown)
    .map(({ candidate }) => candidate)
}

const described = (items: ReadonlyArray<Named>) => items.map((item) => `'${item.name}' (${item.id})`).join(", ")

/**
 * The id `given` names among `candidates` (read only when `given` is not an id). `kind` names the
 * object in messages (`Knowledgebase`, `page`).
 */
export const resolveId = <E, R>(
  kind: string,
  argument: string,
  given: string,
  candidates: Effect.Effect<ReadonlyArray<Named>, E, R>
): Effect.Effect<string, E | NotFound | InvalidRequest, R> =>
  Effect.tap(idNamedBy(kind, argument, given, candidates), (id) => noteResolved(argument, id))

/**
 * The ids each id argument of the call at hand resolved to, by argument name (`knowledgebaseId`),
 * as the tool's handler resolved them; a tool call starts with none (`Effect.locally`).
 */
export const resolvedArguments = FiberRef.unsafeMake<ReadonlyMap<string, ReadonlySet<string>>>(new Map())

const noteResolved = (argument: string, id: string) =>
  FiberRef.update(resolvedArguments, (known) => new Map(known).set(argument, new Set([...(known.get(argument) ?? []), id])))

const idNamedBy = <E, R>(
  kind: string,
  argument: string,
  given: string,
  candidates: Effect.Effect<ReadonlyArray<Named>, E, R>
): Effect.Effect<string, E | NotFound | InvalidRequest, R> => {
  if (uuidPattern.test(given)) return Effect.succeed(given)
  return Effect.flatMap(candidates, (all): Effect.Effect<string, NotFound | InvalidRequest> => {
    const exact = all.filter((item) => item.name === given || item.slug === given)
    if (exact.length === 1) return Effect.succeed(exact[0]!.id)
    if (exact.length > 1) {
      return Effect.fail(new InvalidRequest({ message: `${argument}: ${exact.length} ${kind}s are named '${given}': ${described(exact)}; give the id.` }))
    }
    const near = nearMatches(given, all)
    return Effect.fail(
      new NotFound({
        message: `${argument}: no ${kind} '${given}' in this organization.${near.length > 0 ? ` Near matches: ${described(near)}.` : ""}`
      })
    )
  })
}

/** Collects every item of a paged list (at most `max`), for name lookups. */
export const collectAll = <A, E, R>(
  page: (cursor: string | undefined) => Effect.Effect<{ readonly items: ReadonlyArray<A>; readonly nextCursor: string | null }, E, R>,
  max = 1000
): Effect.Effect<ReadonlyArray<A>, E, R> =>
  Effect.gen(function* () {
    const all: Array<A> = []
    let cursor: string | undefined = undefined
    do {
      const next: { readonly items: ReadonlyArray<A>; readonly nextCursor: string | null } = yield* page(cursor)
      all.push(...next.items)
      cursor = next.nextCursor ?? undefined
    } while (cursor !== undefined && all.length < max)
    return all
  })
