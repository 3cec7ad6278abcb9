/**
 * A Flow as kept in SQL (name and description in columns, the rest of its checked definition as
 * JSON text in a draft or version) and the views built from rows. Only definitions that passed
 * `checkFlowDefinition` are stored, so reading one derives its inputs without checking it again.
 */
import type { ItemRow, VersionRow } from "../versions/store-repo.js"
import type { CheckedQuestion } from "./definition.js"
import type { Flow, FlowDefinition, FlowDraft, FlowInput } from "./domain.js"
import { flowInputs, flowInputsSchema, type JsonSchema } from "./inputs.js"
import { parameterName } from "./parameters.js"

/** What a draft or version keeps as JSON text: the definition without its name and description. */
type KeptFlow = Pick<FlowDefinition, "questions" | "steps" | "output">

/** The JSON text a checked definition is kept as. */
export const flowDefinitionText = (definition: FlowDefinition): string => {
  const kept: KeptFlow = {
    questions: definition.questions,
    steps: definition.steps,
    ...(definition.output === undefined ? {} : { output: definition.output })
  }
  return JSON.stringify(kept)
}

/** The whole definition of a kept Flow: its name and description with its JSON text. */
export const storedFlowDefinition = (name: string, description: string, text: string): FlowDefinition => {
  const kept = JSON.parse(text) as Partial<KeptFlow>
  return {
    name,
    ...(description === "" ? {} : { description }),
    questions: kept.questions ?? [],
    steps: kept.steps ?? [],
    ...(kept.output === undefined ? {} : { output: kept.output })
  }
}

/** The questions of a stored definition under their parameter names (as `checkFlowDefinition` derived them). */
export const storedQuestions = (definition: FlowDefinition): ReadonlyArray<CheckedQuestion> =>
  definition.questions.map((question) => ({
    parameter: parameterName(question.label) ?? question.label,
    label: question.label,
    type: question.type,
    required: question.required ?? false,
    options: question.options ?? null,
    description: question.description ?? null
  }))

/** What every view of a Flow derives from its definition. */
interface DerivedViews {
  readonly conversational: boolean
  readonly inputs: ReadonlyArray<FlowInput>
  readonly inputsSchema: JsonSchema
}

const derived = (definition: FlowDefinition): DerivedViews => {
  const questions = storedQuestions(definition)
  return { conversational: questions.length === 0, inputs: flowInputs({ questions }), inputsSchema: flowInputsSchema({ questions }) }
}

/** A Flow's draft view from its row, on a server whose default model is `serverDefault`. */
export const toFlowDraft = (row: ItemRow, serverDefault: string): FlowDraft => {
  const definition = storedFlowDefinition(row.name, row.description, row.draft)
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    questions: definition.questions,
    steps: definition.steps,
    output: definition.output ?? null,
    ...derived(definition),
    defaultModel: serverDefault,
    publishedVersion: row.published_version,
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

/** A published Flow from its published version's row. */
export const toFlow = (row: VersionRow & { readonly id: string }): Flow => ({
  id: row.id,
  name: row.name,
  description: row.description,
  ...derived(storedFlowDefinition(row.name, row.description, row.definition)),
  version: row.version,
  publishedAt: row.published_at
})
