/**
 * How `builtin` routes an App's message to a member: by the words the message shares with each
 * member's name and description. Words are compared lower-case and Porter-stemmed (as search does),
 * without common English words. A shared word weighs ln(1 + N / n), N members of which n hold it,
 * so a word every member holds counts least; a member's score is the sum over the message's
 * distinct words it holds (rounded to 9 decimals, so equal sums tie). The highest score wins; on a tie the member listed first wins; a
 * message sharing no word with any member goes to none.
 */
import { stemOf } from "../knowledge/search/analyzer.js"

/** A member an App may route to. */
export interface RouteMember {
  readonly id: string
  readonly name: string
  readonly description: string
}

/** The member chosen, its score and the message's words that matched it (in message order). */
export interface RouteChoice<M extends RouteMember> {
  readonly member: M
  readonly score: number
  readonly matched: ReadonlyArray<string>
}

const stopWords = new Set(
  (
    "a about above after again all also am an and any are as at be been before being below both but by can could " +
    "did do does doing down during each few for from further get got had has have having he hello her here hers " +
    "him his hi how i if in into is it its just me more most my no nor not of off on once only or other our ours " +
    "out over own please same she should so some such than thank thanks that the their theirs them then there " +
    "these they this those through to too under until up very want was we were what when where which while who " +
    "whom why will with would you your yours"
  ).split(" ")
)

/** The distinct content words of `text`, lower-case, in order, each with its stem. */
const contentWords = (text: string): Array<{ word: string; stem: string }> => {
  const words = text.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
  const seen = new Set<string>()
  const out: Array<{ word: string; stem: string }> = []
  for (const word of words) {
    if (stopWords.has(word)) continue
    const stem = stemOf(word)
    if (seen.has(stem)) continue
    seen.add(stem)
    out.push({ word, stem })
  }
  return out
}

/** The member whose name and description best match `message`, or `null` when none shares a word with it. */
export const routeByDescription = <M extends RouteMember>(message: string, members: ReadonlyArray<M>): RouteChoice<M> | null => {
  const memberStems = members.map((member) => new Set(contentWords(`${member.name} ${member.description}`).map((w) => w.stem)))
  const holders = (stem: string) => memberStems.filter((stems) => stems.has(stem)).length
  const words = contentWords(message)
  let best: RouteChoice<M> | null = null
  members.forEach((member, i) => {
    const stems = memberStems[i]!
    const matched = words.filter((w) => stems.has(w.stem))
    if (matched.length === 0) return
    const weight = matched.reduce((sum, w) => sum + Math.log(1 + members.length / holders(w.stem)), 0)
    const score = Math.round(weight * 1e9) / 1e9
    if (best === null || score > best.score) best = { member, score, matched: matched.map((w) => w.word) }
  })
  return best
}
