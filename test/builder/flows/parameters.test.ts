import { describe, expect, it } from "vitest"
import { deriveParameters, parameterName } from "../../../server/builder/flows/parameters.js"

describe("parameterName: labels to parameter names", () => {
  it.each([
    ["Company name", "company_name"],
    ["Email", "email"],
    ["  Budget (USD)  ", "budget_usd"],
    ["What's your role?", "what_s_your_role"],
    ["Crème brûlée", "creme_brulee"],
    ["Ça va, Zoë?", "ca_va_zoe"],
    ["Straße", "strasse"],
    ["Łódź office", "lodz_office"],
    ["ＦＵＬＬ width", "full_width"],
    ["ﬁle name", "file_name"],
    ["Number of seats", "number_of_seats"],
    ["--Team -- size--", "team_size"],
    ["a___b", "a_b"],
    ["snake_case_label", "snake_case_label"],
    ["CamelCase", "camelcase"],
    ["2nd choice", "q_2nd_choice"],
    ["  3 ", "q_3"],
    ["Top 10 goals", "top_10_goals"]
  ])("%j -> %s", (label, name) => {
    expect(parameterName(label)).toBe(name)
  })

  it.each(["", "   ", "???", "名前", "—", "🙂"])("%j gives no name", (label) => {
    expect(parameterName(label)).toBeNull()
  })
})

describe("deriveParameters: save-time rules", () => {
  it("gives each label its name, in order", () => {
    expect(
      deriveParameters([
        { path: "questions[0]", label: "Company name" },
        { path: "questions[1]", label: "Budget" }
      ])
    ).toEqual({
      parameters: [
        { path: "questions[0]", label: "Company name", name: "company_name" },
        { path: "questions[1]", label: "Budget", name: "budget" }
      ],
      problems: []
    })
  })

  it("refuses a collision naming both labels and where they are", () => {
    const derived = deriveParameters([
      { path: "questions[0]", label: "Company name" },
      { path: "questions[1]", label: "Budget" },
      { path: "questions[2]", label: "Company Name!" }
    ])
    expect(derived.problems).toEqual([
      'questions[2].label: "Company Name!" gives the parameter name company_name, as questions[0].label "Company name" does; labels must give different names'
    ])
    expect(derived.parameters.map((parameter) => parameter.name)).toEqual(["company_name", "budget"])
  })

  it("refuses collisions made by accents and punctuation", () => {
    const derived = deriveParameters([
      { path: "questions[0]", label: "Résumé" },
      { path: "questions[1]", label: "resume" },
      { path: "questions[2]", label: "RESUME?" }
    ])
    expect(derived.problems).toHaveLength(2)
    expect(derived.problems[0]).toContain('questions[1].label: "resume" gives the parameter name resume, as questions[0].label "Résumé"')
    expect(derived.problems[1]).toContain('questions[2].label: "RESUME?" gives the parameter name resume, as questions[0].label "Résumé"')
  })

  it("refuses a label that gives no name, naming it", () => {
    expect(deriveParameters([{ path: "questions[4]", label: "???" }]).problems).toEqual([
      'questions[4].label: "???" gives no parameter name; use letters or digits'
    ])
  })
})
