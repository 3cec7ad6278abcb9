/**
 * The save-time check of a Flow definition: the body schema, parameter names, step names and
 * variables, every problem at once (each naming its field path), so the service answers one 400
 * `invalid_request` naming them all. A definition that passes is a `CheckedFlow`: what the run
 * layer executes and the listings describe.
 */
import { Either, ParseResult, Schema } from "effect"
import { FlowDefinition, maxQuestions, maxSteps, type QuestionType } from "./domain.js"
import { deriveParameters, type LabelAt } from "./parameters.js"
import { reportedProblems } from "./problems.js"
import { checkVariables, parseTemplate, type StepTemplates, type Template } from "./templates.js"

/** The variable holding the user's message in a Flow without questions (called like an Agent). */
export const conversationMessageVariable = "message"

/** A question under its parameter name. */
export interface CheckedQuestion {
  readonly parameter: string
  readonly label: string
  readonly type: QuestionType
  readonly required: boolean
  /** The choices of a `select` or `multi_select` question; null for the others. */
  readonly options: ReadonlyArray<string> | null
  readonly description: string | null
}

/** A step with its templates parsed. */
export type CheckedStep =
  | { readonly type: "prompt"; readonly name: string; readonly template: Template; readonly model: string | null }
  | {
      readonly type: "search"
      readonly name: string
      readonly query: Template
      /** The Knowledgebases to search; null when the step names none. */
      readonly knowledgebaseIds: ReadonlyArray<string> | null
    }
  | { readonly type: "agent"; readonly name: string; readonly agentId: string; readonly message: Template }
  | { readonly type: "template"; readonly name: string; readonly template: Template }

/** A Flow definition that passed every save-time rule. */
export interface CheckedFlow {
  /** The definition as decoded (labels, names and options trimmed): what a draft stores. */
  readonly definition: FlowDefinition
  readonly questions: ReadonlyArray<CheckedQuestion>
  readonly steps: ReadonlyArray<CheckedStep>
  /** The output template: the body's `output`, else the last step's variable. */
  readonly output: Template
  /** True for a Flow without questions: run with `message` and `conversation_id`, like an Agent. */
  readonly conversational: boolean
  /** The variables in scope before the first step: the parameters, or `message`. */
  readonly inputVariables: ReadonlyArray<string>
}

/** Why a definition was refused: every problem, each naming its field path (see `reportedProblems`). */
export interface FlowDefinitionProblems {
  readonly problems: ReadonlyArray<string>
}

/** A reference to another object of the organization, where the definition makes it. */
export interface FlowReference {
  /** `steps[1].knowledgebaseIds[0]`, `steps[2].agentId` */
  readonly path: string
  readonly id: string
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A decode path as a field path: `["questions", 2, "options"]` -> `questions[2].options`. */
export const fieldPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (text, key) => (typeof key === "number" ? `${text}[${key}]` : text === "" ? String(key) : `${text}.${String(key)}`),
    ""
  )

const schemaProblems = (body: unknown): Either.Either<FlowDefinition, ReadonlyArray<string>> => {
  if (!isRecord(body)) return Either.left(["the body must be a JSON object"])
  return Either.mapLeft(Schema.decodeUnknownEither(FlowDefinition)(body), (error) => {
    const byPath = new Map<string, string>()
    for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
      const path = fieldPath(issue.path)
      if (!byPath.has(path)) byPath.set(path, issue.message)
    }
    return [...byPath].map(([path, message]) => (path === "" ? message : `${path}: ${message}`))
  })
}

const templateFields: Readonly<Record<string, ReadonlyArray<string>>> = {
  prompt: ["template"],
  search: ["query"],
  agent: ["message"],
  template: ["template"]
}

/** The labels of the body's questions, read leniently so one broken question hides no other problem. */
const rawLabels = (questions: ReadonlyArray<unknown>): ReadonlyArray<LabelAt> =>
  questions.flatMap((question, index) =>
    isRecord(question) && typeof question.label === "string" && question.label.trim() !== ""
      ? [{ path: `questions[${index}]`, label: question.label.trim() }]
      : []
  )

/** The body's steps as the variable check sees them, read leniently. */
const rawSteps = (steps: ReadonlyArray<unknown>): ReadonlyArray<StepTemplates> =>
  steps.map((step, index) => {
    const record = isRecord(step) ? step : {}
    const fields = typeof record.type === "string" ? (templateFields[record.type] ?? []) : []
    return {
      path: `steps[${index}]`,
      name: typeof record.name === "string" && record.name !== "" ? record.name : undefined,
      templates: fields.map((field) => {
        const source = record[field]
        return { field, source: typeof source === "string" ? source : undefined }
      })
    }
  })

/** The rules beyond the schema, on a body whose lists are within their bounds (else the schema says so). */
const ruleProblems = (body: Record<string, unknown>): ReadonlyArray<string> => {
  if (!Array.isArray(body.questions) || body.questions.length > maxQuestions) return []
  if (Array.isArray(body.steps) && body.steps.length > maxSteps) return []
  const derived = deriveParameters(rawLabels(body.questions))
  const parameters = new Map<string, string>(
    body.questions.length === 0
      ? [[conversationMessageVariable, "the message of a Flow without questions"]]
      : derived.parameters.map((parameter) => [parameter.name, `${parameter.path} "${parameter.label}"`])
  )
  const steps = Array.isArray(body.steps) ? rawSteps(body.steps) : []
  const output = typeof body.output === "string" ? body.output : undefined
  const noWork =
    Array.isArray(body.steps) && body.steps.length === 0 && body.output === undefined
      ? ["steps: a Flow needs at least one step or an output"]
      : []
  return [...derived.problems, ...noWork, ...checkVariables({ parameters, steps, output })]
}

const parsed = (source: string): Template => Either.getOrThrow(parseTemplate(source))

const checkedStep = (step: FlowDefinition["steps"][number]): CheckedStep => {
  switch (step.type) {
    case "prompt":
      return { type: "prompt", name: step.name, template: parsed(step.template), model: step.model ?? null }
    case "search":
      return { type: "search", name: step.name, query: parsed(step.query), knowledgebaseIds: step.knowledgebaseIds ?? null }
    case "agent":
      return { type: "agent", name: step.name, agentId: step.agentId, message: parsed(step.message) }
    case "template":
      return { type: "template", name: step.name, template: parsed(step.template) }
  }
}

const checkedFlow = (definition: FlowDefinition): CheckedFlow => {
  const questions = definition.questions.map(
    (question): CheckedQuestion => ({
      parameter: deriveParameters([{ path: "", label: question.label }]).parameters[0]!.name,
      label: question.label,
      type: question.type,
      required: question.required ?? false,
      options: question.options ?? null,
      description: question.description ?? null
    })
  )
  const conversational = questions.length === 0
  const lastStep = definition.steps.at(-1)
  return {
    definition,
    questions,
    steps: definition.steps.map(checkedStep),
    output: parsed(definition.output ?? `{{${lastStep!.name}}}`),
    conversational,
    inputVariables: conversational ? [conversationMessageVariable] : questions.map((question) => question.parameter)
  }
}

/**
 * Checks a Flow definition (the body of `POST /flows`, or a draft with a patch applied): every
 * problem at once, or the checked Flow. References to other objects (`agentId`,
 * `knowledgebaseIds`) are not looked up here: see `flowReferences`.
 */
export const checkFlowDefinition = (body: unknown): Either.Either<CheckedFlow, FlowDefinitionProblems> => {
  const decoded = schemaProblems(body)
  const rules = isRecord(body) ? ruleProblems(body) : []
  const problems = reportedProblems([...(Either.isLeft(decoded) ? decoded.left : []), ...rules])
  if (problems.length > 0 || Either.isLeft(decoded)) return Either.left({ problems })
  return Either.right(checkedFlow(decoded.right))
}

/** The Knowledgebases and Agents a checked Flow names, with where, for the service to look up. */
export const flowReferences = (
  flow: CheckedFlow
): { readonly knowledgebaseIds: ReadonlyArray<FlowReference>; readonly agentIds: ReadonlyArray<FlowReference> } => ({
  knowledgebaseIds: flow.steps.flatMap((step, index) =>
    step.type === "search" && step.knowledgebaseIds !== null
      ? step.knowledgebaseIds.map((id, at) => ({ path: `steps[${index}].knowledgebaseIds[${at}]`, id }))
      : []
  ),
  agentIds: flow.steps.flatMap((step, index) =>
    step.type === "agent" ? [{ path: `steps[${index}].agentId`, id: step.agentId }] : []
  )
})
