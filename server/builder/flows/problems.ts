/** The problem lists Flow checks answer with, bounded so a hostile body cannot make a huge answer. */

/** Most problems one answer names; beyond it the last line counts the rest. */
export const maxReportedProblems = 100

/** Each distinct problem once, in order, at most `maxReportedProblems` and a count of the rest. */
export const reportedProblems = (problems: ReadonlyArray<string>): ReadonlyArray<string> => {
  const distinct = [...new Set(problems)]
  if (distinct.length <= maxReportedProblems) return distinct
  const rest = distinct.length - maxReportedProblems
  return [...distinct.slice(0, maxReportedProblems), `… and ${rest} more problem${rest === 1 ? "" : "s"}`]
}
