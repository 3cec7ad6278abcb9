import { describe, expect, it } from "vitest"
import { maxReportedProblems, reportedProblems } from "../../../server/builder/flows/problems.js"

describe("reportedProblems", () => {
  it("keeps each distinct problem once, in order", () => {
    expect(reportedProblems(["b", "a", "b", "c"])).toEqual(["b", "a", "c"])
  })

  it("names up to the bound and counts the rest", () => {
    const many = Array.from({ length: maxReportedProblems + 1 }, (_, index) => `p${index}`)
    expect(reportedProblems(many.slice(0, maxReportedProblems))).toHaveLength(maxReportedProblems)
    expect(reportedProblems(many)).toEqual([...many.slice(0, maxReportedProblems), "… and 1 more problem"])
    expect(reportedProblems([...many, "x", "y"]).at(-1)).toBe("… and 3 more problems")
  })
})
