import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { type CheckedFlow, checkFlowDefinition, fieldPath, flowReferences } from "../../../server/builder/flows/definition.js"
import { renderTemplate } from "../../../server/builder/flows/templates.js"

const kb1 = "3f0a3a5e-8d4b-4b8e-9c59-2a8e0f7d1c11"
const kb2 = "9b2c7d3e-1f4a-4c5b-8e6d-7a8b9c0d1e2f"
const agent = "5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

const lead = {
  name: "Lead qualification",
  description: "Scores a lead",
  questions: [
    { label: " Company name ", type: "text", required: true },
    { label: "Budget (USD)", type: "number" },
    { label: "Plan", type: "select", options: ["Basic", "Pro"], required: true, description: "Which plan" }
  ],
  steps: [
    { type: "search", name: "context", query: "{{company_name}}", knowledgebaseIds: [kb1, kb2] },
    { type: "prompt", name: "assessment", template: "Assess {{ company_name }} ({{budget_usd}}) on {{plan}}: {{context}}", model: "gpt-4o-mini" },
    { type: "agent", name: "advice", agentId: agent, message: "{{assessment}}" },
    { type: "template", name: "summary", template: "{{assessment}} / {{advice}}" }
  ]
}

const checked = (body: unknown): CheckedFlow => {
  const result = checkFlowDefinition(body)
  if (Either.isLeft(result)) throw new Error(result.left.problems.join("\n"))
  return result.right
}
const problems = (body: unknown): ReadonlyArray<string> => {
  const result = checkFlowDefinition(body)
  if (Either.isRight(result)) throw new Error("expected problems")
  return result.left.problems
}

describe("checkFlowDefinition: a definition that passes", () => {
  it("gives the questions under their parameter names", () => {
    expect(checked(lead).questions).toEqual([
      { parameter: "company_name", label: "Company name", type: "text", required: true, options: null, description: null },
      { parameter: "budget_usd", label: "Budget (USD)", type: "number", required: false, options: null, description: null },
      { parameter: "plan", label: "Plan", type: "select", required: true, options: ["Basic", "Pro"], description: "Which plan" }
    ])
  })

  it("parses every step's template and keeps the rest of the step", () => {
    const flow = checked(lead)
    expect(flow.steps.map((step) => [step.type, step.name])).toEqual([
      ["search", "context"],
      ["prompt", "assessment"],
      ["agent", "advice"],
      ["template", "summary"]
    ])
    const [search, prompt, agentStep] = flow.steps
    expect(search).toMatchObject({ knowledgebaseIds: [kb1, kb2] })
    expect(prompt).toMatchObject({ model: "gpt-4o-mini" })
    expect(agentStep).toMatchObject({ agentId: agent })
    if (prompt?.type !== "prompt") throw new Error("expected a prompt step")
    expect(renderTemplate(prompt.template, { company_name: "Acme", budget_usd: 5, plan: "Pro", context: "ctx" })).toBe("Assess Acme (5) on Pro: ctx")
  })

  it("defaults the output to the last step's variable, else uses the one given", () => {
    expect(renderTemplate(checked(lead).output, { summary: "done" })).toBe("done")
    expect(renderTemplate(checked({ ...lead, output: "Plan {{plan}}: {{summary}}" }).output, { plan: "Pro", summary: "ok" })).toBe("Plan Pro: ok")
  })

  it("keeps the decoded definition (trimmed) to store", () => {
    const flow = checked(lead)
    expect(flow.definition.questions[0]?.label).toBe("Company name")
    expect(flow.definition.name).toBe("Lead qualification")
    expect(flow.conversational).toBe(false)
    expect(flow.inputVariables).toEqual(["company_name", "budget_usd", "plan"])
  })

  it("lists the references to look up, with where they are", () => {
    expect(flowReferences(checked(lead))).toEqual({
      knowledgebaseIds: [
        { path: "steps[0].knowledgebaseIds[0]", id: kb1 },
        { path: "steps[0].knowledgebaseIds[1]", id: kb2 }
      ],
      agentIds: [{ path: "steps[2].agentId", id: agent }]
    })
  })

  it("takes a Flow of only an output", () => {
    expect(renderTemplate(checked({ name: "Echo", questions: [{ label: "Text", type: "text" }], steps: [], output: "> {{text}}" }).output, { text: "hi" })).toBe("> hi")
  })
})

describe("checkFlowDefinition: a Flow without questions is conversational", () => {
  const chat = { name: "Chat", questions: [], steps: [{ type: "prompt", name: "answer", template: "Answer: {{ message }}" }] }

  it("is marked conversational, with message in scope", () => {
    const flow = checked(chat)
    expect(flow.conversational).toBe(true)
    expect(flow.inputVariables).toEqual(["message"])
  })

  it("refuses a step named message", () => {
    expect(problems({ ...chat, steps: [{ type: "template", name: "message", template: "x" }] })).toEqual([
      "steps[0] (message): the name message is already an input parameter (the message of a Flow without questions)"
    ])
  })

  it("has no message variable when it asks questions", () => {
    expect(problems({ ...chat, questions: [{ label: "Topic", type: "text" }] })).toEqual([
      "steps[0] (answer): unknown variable {{message}} in template"
    ])
  })
})

describe("checkFlowDefinition: refusals", () => {
  it("refuses a body that is not an object", () => {
    expect(problems(null)).toEqual(["the body must be a JSON object"])
    expect(problems([lead])).toEqual(["the body must be a JSON object"])
  })

  it("names an unknown variable with its step", () => {
    expect(problems({ ...lead, steps: [...lead.steps, { type: "template", name: "extra", template: "{{foo}}" }] })).toEqual([
      "steps[4] (extra): unknown variable {{foo}} in template"
    ])
  })

  it("refuses a forward reference", () => {
    const [first, ...rest] = lead.steps
    expect(problems({ ...lead, steps: [...rest, first] })).toContain(
      "steps[0] (assessment): {{context}} in template is bound by a later step, steps[3]"
    )
  })

  it("checks the output's variables", () => {
    expect(problems({ ...lead, output: "{{summary}} {{total}}" })).toEqual(["output: unknown variable {{total}}"])
  })

  it("refuses a Flow with neither steps nor output", () => {
    expect(problems({ ...lead, steps: [] })).toEqual(["steps: a Flow needs at least one step or an output"])
  })

  it("names a label collision with both labels", () => {
    expect(problems({ ...lead, questions: [...lead.questions, { label: "PLAN!", type: "text" }] })).toEqual([
      'questions[3].label: "PLAN!" gives the parameter name plan, as questions[2].label "Plan" does; labels must give different names'
    ])
  })

  it("reports every problem at once, each naming its field path", () => {
    const body = {
      name: "",
      questions: [
        { label: "Company name", type: "text" },
        { label: "Company-Name", type: "text" },
        { label: "Tier", type: "select" },
        { label: "???", type: "email", colour: "red" }
      ],
      steps: [
        { type: "prompt", name: "draft", template: "{{summary}} for {{company_name}}" },
        { type: "template", name: "summary", template: "{{foo}} {{tier}} {{open" },
        { type: "search", name: "summary", query: "x", knowledgebaseIds: ["nope"] },
        { type: "agent", name: "company_name", agentId: agent, message: "{{draft}}" }
      ],
      output: "{{bar}}",
      extra: true
    }
    expect(problems(body)).toEqual([
      'extra: is unexpected, expected: "name" | "description" | "questions" | "steps" | "output"',
      "name: name must be 1 to 200 characters",
      "questions[2].options: a select question needs options",
      'questions[3].colour: is unexpected, expected: "label" | "type" | "required" | "options" | "description"',
      'steps[2].knowledgebaseIds[0]: Expected a Universally Unique Identifier, actual "nope"',
      'questions[1].label: "Company-Name" gives the parameter name company_name, as questions[0].label "Company name" does; labels must give different names',
      'questions[3].label: "???" gives no parameter name; use letters or digits',
      "steps[0] (draft): {{summary}} in template is bound by a later step, steps[1]",
      "steps[1] (summary): unclosed {{ at character 18 in template",
      "steps[1] (summary): unknown variable {{foo}} in template",
      "steps[2] (summary): the name summary is already bound by steps[1]",
      'steps[3] (company_name): the name company_name is already an input parameter (questions[0] "Company name")',
      "output: unknown variable {{bar}}"
    ])
  })

  it("does not report variables of a question or step refused for another reason", () => {
    expect(
      problems({
        name: "F",
        questions: [{ label: "Company name", type: "colour" }],
        steps: [
          { type: "prompt", name: "Summary", template: "{{company_name}}" },
          { type: "template", name: "out", template: "{{Summary}}", extra: 1 }
        ]
      })
    ).toEqual([
      `questions[0].type: type must be one of text, long_text, number, boolean, select, multi_select, email, url, date`,
      "steps[0].name: a step name must be 1 to 64 lowercase letters, digits or underscores, not starting with a digit",
      'steps[1].extra: is unexpected, expected: "type" | "name" | "template"'
    ])
  })
})

describe("checkFlowDefinition: bounded answers", () => {
  it("leaves the rules to the schema's size refusal when a list is over its bound", () => {
    const questions = Array.from({ length: 51 }, () => ({ label: "Same", type: "text" }))
    expect(problems({ ...lead, questions })).toEqual(["questions: a Flow may ask at most 50 questions"])
    const steps = Array.from({ length: 21 }, () => ({ type: "template", name: "same", template: "{{nope}}" }))
    expect(problems({ ...lead, steps })).toEqual(["steps: a Flow may run at most 20 steps"])
  })

  it("names at most 100 problems and counts the rest", () => {
    const template = Array.from({ length: 10 }, (_, index) => `{{v${index}}}`).join(" ")
    const steps = Array.from({ length: 15 }, (_, index) => ({ type: "template", name: `s${index}`, template }))
    const found = problems({ ...lead, steps })
    expect(found).toHaveLength(101)
    expect(found[0]).toBe("steps[0] (s0): unknown variable {{v0}} in template")
    expect(found[100]).toBe("… and 50 more problems")
  })
})

describe("fieldPath", () => {
  it("writes indexes in brackets and keys with dots", () => {
    expect(fieldPath(["questions", 2, "options", 0])).toBe("questions[2].options[0]")
    expect(fieldPath([])).toBe("")
  })
})
