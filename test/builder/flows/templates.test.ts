import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  checkVariables,
  parseTemplate,
  renderTemplate,
  type StepTemplates,
  type Template,
  templateVariables
} from "../../../server/builder/flows/templates.js"

const parse = (source: string): Template => Either.getOrThrow(parseTemplate(source))
const refusal = (source: string): ReadonlyArray<string> => {
  const result = parseTemplate(source)
  if (Either.isRight(result)) throw new Error(`expected a refusal of ${source}`)
  return result.left
}

describe("parseTemplate", () => {
  it("splits text and variables", () => {
    expect(parse("Hello {{name}}, from {{company_name}}.").parts).toEqual([
      { kind: "text", text: "Hello " },
      { kind: "variable", name: "name" },
      { kind: "text", text: ", from " },
      { kind: "variable", name: "company_name" },
      { kind: "text", text: "." }
    ])
  })

  it("allows whitespace inside the braces, newlines included", () => {
    expect(parse("{{ name }}{{\tother\n}}").parts).toEqual([
      { kind: "variable", name: "name" },
      { kind: "variable", name: "other" }
    ])
  })

  it("keeps text without placeholders and a lone }} as text", () => {
    expect(parse("no placeholders }} here").parts).toEqual([{ kind: "text", text: "no placeholders }} here" }])
  })

  it("lists each variable once in order of first use", () => {
    expect(templateVariables(parse("{{b}} {{a}} {{ b }} {{c}}"))).toEqual(["b", "a", "c"])
  })

  it("refuses an unclosed {{ with its position", () => {
    expect(refusal("Hi {{name")).toEqual(["unclosed {{ at character 4"])
  })

  it.each([
    ["{{}}", "{{}} at character 1"],
    ["x {{first name}}", "{{first name}} at character 3"],
    ["{{user.email}}", "{{user.email}} at character 1"],
    ["{{#if x}}", "{{#if x}} at character 1"],
    ["{{{name}}}", "{{{name}} at character 1"],
    ["{{ 1st }}", "{{ 1st }} at character 1"],
    ["{{na-me}}", "{{na-me}} at character 1"]
  ])("refuses %j, naming what and where", (source, start) => {
    const problems = refusal(source)
    expect(problems).toHaveLength(1)
    expect(problems[0]).toBe(`${start} is not a {{variable}} (letters, digits and underscores)`)
  })

  it("reports every syntax problem of a template", () => {
    expect(refusal("{{a b}} then {{ok}} then {{c.d}} and {{open")).toEqual([
      "{{a b}} at character 1 is not a {{variable}} (letters, digits and underscores)",
      "{{c.d}} at character 26 is not a {{variable}} (letters, digits and underscores)",
      "unclosed {{ at character 38"
    ])
  })
})

describe("renderTemplate", () => {
  it("fills placeholders with text, numbers, booleans and lists", () => {
    const template = parse("{{ company }} has {{seats}} seats, trial: {{trial}}, via {{channels}}.")
    expect(renderTemplate(template, { company: "Acme", seats: 12.5, trial: false, channels: ["email", "phone"] })).toBe(
      "Acme has 12.5 seats, trial: false, via email, phone."
    )
  })

  it("renders an absent value as empty and never reads inherited properties", () => {
    expect(renderTemplate(parse("[{{missing}}][{{constructor}}][{{toString}}]"), {})).toBe("[][][]")
  })

  it("does not re-interpret placeholders inside values", () => {
    expect(renderTemplate(parse("{{a}}"), { a: "{{b}}", b: "no" })).toBe("{{b}}")
  })
})

const step = (index: number, name: string | undefined, ...sources: Array<string | undefined>): StepTemplates => ({
  path: `steps[${index}]`,
  name,
  templates: sources.map((source) => ({ field: "template", source }))
})

const parameters = new Map([
  ["company_name", 'questions[0] "Company name"'],
  ["budget", 'questions[1] "Budget"']
])

describe("checkVariables", () => {
  it("accepts parameters and variables of earlier steps, and an output over all", () => {
    expect(
      checkVariables({
        parameters,
        steps: [step(0, "research", "About {{company_name}}"), step(1, "summary", "{{research}} for {{ budget }}")],
        output: "{{summary}} / {{research}} / {{company_name}}"
      })
    ).toEqual([])
  })

  it("names the step and the variable for an unknown variable", () => {
    expect(
      checkVariables({ parameters, steps: [step(0, "research", "x"), step(1, "summary", "{{foo}} and {{research}}")], output: undefined })
    ).toEqual(["steps[1] (summary): unknown variable {{foo}} in template"])
  })

  it("hints at the lowercase spelling when it exists", () => {
    expect(checkVariables({ parameters, steps: [step(0, "s", "{{Company_Name}}")], output: undefined })).toEqual([
      "steps[0] (s): unknown variable {{Company_Name}} in template (did you mean {{company_name}}?)"
    ])
  })

  it("refuses a forward reference, naming the later step", () => {
    expect(
      checkVariables({ parameters, steps: [step(0, "draft", "{{summary}}"), step(1, "summary", "{{company_name}}")], output: undefined })
    ).toEqual(["steps[0] (draft): {{summary}} in template is bound by a later step, steps[1]"])
  })

  it("refuses a step using its own variable", () => {
    expect(checkVariables({ parameters, steps: [step(0, "loop", "{{loop}}")], output: undefined })).toEqual([
      "steps[0] (loop): {{loop}} in template is this step's own variable"
    ])
  })

  it("refuses step names bound twice or clashing with a parameter", () => {
    expect(
      checkVariables({
        parameters,
        steps: [step(0, "summary", "a"), step(1, "budget", "b"), step(2, "summary", "c")],
        output: undefined
      })
    ).toEqual([
      'steps[1] (budget): the name budget is already an input parameter (questions[1] "Budget")',
      "steps[2] (summary): the name summary is already bound by steps[0]"
    ])
  })

  it("checks the output against every parameter and step", () => {
    expect(
      checkVariables({ parameters, steps: [step(0, "summary", "a")], output: "{{summary}} {{nope}} {{ budget }} {{bad syntax}}" })
    ).toEqual([
      "output: {{bad syntax}} at character 35 is not a {{variable}} (letters, digits and underscores)",
      "output: unknown variable {{nope}}"
    ])
    expect(checkVariables({ parameters, steps: [step(0, "summary", "a")], output: "{{summary}} {{nope}}" })).toEqual([
      "output: unknown variable {{nope}}"
    ])
  })

  it("reports syntax problems with the step and field, and every problem at once", () => {
    expect(
      checkVariables({
        parameters,
        steps: [step(0, "a", "{{x", "{{y}}"), step(1, "b", "{{z}}"), step(2, undefined, "{{w}}")],
        output: "{{v}}"
      })
    ).toEqual([
      "steps[0] (a): unclosed {{ at character 1 in template",
      "steps[0] (a): unknown variable {{y}} in template",
      "steps[1] (b): unknown variable {{z}} in template",
      "steps[2]: unknown variable {{w}} in template",
      "output: unknown variable {{v}}"
    ])
  })
})
