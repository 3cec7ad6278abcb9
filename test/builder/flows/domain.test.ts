import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Either, JSONSchema, ParseResult, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  applyDraftPatch,
  FlowDefinition,
  FlowDraftPatch,
  FlowInput,
  Question,
  questionTypes,
  Step
} from "../../../server/builder/flows/domain.js"

const issues = <A, I>(schema: Schema.Schema<A, I>, input: unknown): ReadonlyArray<string> => {
  const result = Schema.decodeUnknownEither(schema)(input)
  if (Either.isRight(result)) throw new Error(`expected a refusal, got ${JSON.stringify(result.right)}`)
  return ParseResult.ArrayFormatter.formatErrorSync(result.left).map((issue) => `${issue.path.join(".")}: ${issue.message}`)
}
const decoded = <A, I>(schema: Schema.Schema<A, I>, input: unknown): A => Schema.decodeUnknownSync(schema)(input)

describe("Question", () => {
  it.each(questionTypes.filter((type) => type !== "select" && type !== "multi_select"))("accepts a %s question without options", (type) => {
    expect(decoded(Question, { label: "Q", type })).toEqual({ label: "Q", type })
  })

  it.each(["select", "multi_select"])("accepts a %s question with options, trimmed", (type) => {
    expect(decoded(Question, { label: " Plan ", type, options: [" Basic", "Pro "], required: true, description: "Which one" })).toEqual({
      label: "Plan",
      type,
      options: ["Basic", "Pro"],
      required: true,
      description: "Which one"
    })
  })

  it.each(["select", "multi_select"])("refuses a %s question without options", (type) => {
    expect(issues(Question, { label: "Plan", type })).toEqual([`options: a ${type} question needs options`])
  })

  it("refuses options on a question that offers no choices", () => {
    expect(issues(Question, { label: "Name", type: "text", options: ["a"] })).toEqual([
      "options: only select and multi_select questions take options, not text"
    ])
  })

  it("refuses empty, repeated and blank options", () => {
    expect(issues(Question, { label: "Plan", type: "select", options: [] })).toEqual(["options: options must offer at least one choice"])
    expect(issues(Question, { label: "Plan", type: "select", options: ["a", "b", " a"] })).toEqual(['options: options offers "a" more than once'])
    expect(issues(Question, { label: "Plan", type: "select", options: ["a", " "] })).toEqual(["options.1: an option must be 1 to 200 characters"])
  })

  it("refuses an unknown type, an empty label and unknown properties", () => {
    expect(issues(Question, { label: "", type: "color", hint: "x" })).toEqual([
      'hint: is unexpected, expected: "label" | "type" | "required" | "options" | "description"',
      "label: label must be 1 to 200 characters",
      `type: type must be one of ${questionTypes.join(", ")}`
    ])
  })
})

describe("Step", () => {
  it("accepts each of the four kinds", () => {
    const steps = [
      { type: "prompt", name: "summary", template: "Sum up {{x}}", model: "gpt-4o-mini" },
      { type: "search", name: "found", query: "{{x}}", knowledgebaseIds: ["3f0a3a5e-8d4b-4b8e-9c59-2a8e0f7d1c11"] },
      { type: "agent", name: "advice", agentId: "3f0a3a5e-8d4b-4b8e-9c59-2a8e0f7d1c11", message: "{{x}}" },
      { type: "template", name: "_out2", template: "{{x}}" }
    ]
    for (const step of steps) expect(decoded(Step, step)).toEqual(step)
  })

  it("refuses an unknown kind, bad names, empty templates, bad ids and unknown properties", () => {
    expect(issues(Step, { type: "loop", name: "x" })).toEqual(['type: Expected "prompt" | "search" | "agent" | "template", actual "loop"'])
    expect(issues(Step, { type: "prompt", name: "Summary", template: "" })).toEqual([
      "name: a step name must be 1 to 64 lowercase letters, digits or underscores, not starting with a digit",
      "template: a template must not be empty"
    ])
    expect(issues(Step, { type: "agent", name: "a", agentId: "nope", message: "m", model: "x" })).toEqual([
      'model: is unexpected, expected: "type" | "name" | "agentId" | "message"',
      'agentId: Expected a Universally Unique Identifier, actual "nope"'
    ])
    expect(issues(Step, { type: "template", name: "1st", template: "x" })).toHaveLength(1)
  })
})

const definition = {
  name: "Lead qualification",
  questions: [{ label: "Company name", type: "text", required: true }],
  steps: [{ type: "template", name: "greeting", template: "Hello {{company_name}}" }]
}

describe("FlowDefinition", () => {
  it("accepts a definition, output and description optional", () => {
    expect(decoded(FlowDefinition, definition)).toEqual(definition)
    expect(decoded(FlowDefinition, { ...definition, description: "d", output: "{{greeting}}" })).toMatchObject({ output: "{{greeting}}" })
  })

  it("requires name, questions and steps and refuses unknown properties", () => {
    expect(issues(FlowDefinition, { inputs: [] })).toEqual([
      'inputs: is unexpected, expected: "name" | "description" | "questions" | "steps" | "output"',
      "name: is missing",
      "questions: is missing",
      "steps: is missing"
    ])
  })

  it("bounds questions and steps", () => {
    const many = Array.from({ length: 51 }, (_, index) => ({ label: `Q${index}`, type: "text" }))
    expect(issues(FlowDefinition, { ...definition, questions: many })).toEqual(["questions: a Flow may ask at most 50 questions"])
    const steps = Array.from({ length: 21 }, (_, index) => ({ type: "template", name: `s${index}`, template: "x" }))
    expect(issues(FlowDefinition, { ...definition, steps })).toEqual(["steps: a Flow may run at most 20 steps"])
  })

  it("has a JSON Schema for the OpenAPI description", () => {
    const jsonSchema = JSONSchema.make(FlowDefinition) as { $defs: Record<string, unknown> }
    expect(jsonSchema.$defs).toHaveProperty("FlowQuestion")
    expect(jsonSchema.$defs).toHaveProperty("FlowPromptStep")
    expect(jsonSchema.$defs.FlowQuestion).toMatchObject({ additionalProperties: false, required: ["label", "type"] })
  })

  it("describes the bodies and the inputs item in an OpenAPI document", () => {
    const group = HttpApiGroup.make("flows")
      .add(HttpApiEndpoint.post("create", "/flows").setPayload(FlowDefinition).addSuccess(Schema.Array(FlowInput)))
      .add(HttpApiEndpoint.patch("patchDraft", "/flows/:id/draft").setPayload(FlowDraftPatch))
    const document = OpenApi.fromApi(HttpApi.make("flows-test").add(group))
    const schemas = document.components.schemas as Record<string, { properties?: Record<string, unknown>; minProperties?: number }>
    expect(Object.keys(schemas)).toEqual(expect.arrayContaining(["FlowDefinition", "FlowDraftPatch", "FlowInput", "FlowStep"]))
    expect(schemas.FlowDraftPatch?.minProperties).toBe(1)
    expect(schemas.FlowInput?.properties).toHaveProperty("options")
  })
})

describe("FlowDraftPatch and applyDraftPatch", () => {
  const current = decoded(FlowDefinition, { ...definition, description: "old", output: "{{greeting}}" })

  it("refuses an empty patch and unknown properties", () => {
    expect(issues(FlowDraftPatch, {})).toEqual([": the patch must change at least one property"])
    expect(issues(FlowDraftPatch, { title: "x" })).toEqual(['title: is unexpected, expected: "name" | "description" | "questions" | "steps" | "output"'])
  })

  it("replaces only the properties given", () => {
    expect(applyDraftPatch(current, decoded(FlowDraftPatch, { name: "Renamed" }))).toEqual({ ...current, name: "Renamed" })
    const steps = [{ type: "template", name: "other", template: "x" }] as const
    expect(applyDraftPatch(current, decoded(FlowDraftPatch, { steps }))).toEqual({ ...current, steps })
  })

  it("removes the output with null", () => {
    const patched = applyDraftPatch(current, decoded(FlowDraftPatch, { output: null }))
    expect(patched).not.toHaveProperty("output")
    expect(patched.description).toBe("old")
  })
})

describe("FlowInput", () => {
  it("describes one input", () => {
    const input = { name: "plan", label: "Plan", type: "select", options: ["a"], required: false }
    expect(decoded(FlowInput, input)).toEqual(input)
  })
})
