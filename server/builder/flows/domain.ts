/**
 * Flows as authors write them: the body schemas of `POST /flows` and `PATCH /flows/{id}/draft`,
 * and the `inputs` listing item. The rules that need the whole definition (parameter names,
 * variables, step names) are checked by `checkFlowDefinition` in `definition.ts`.
 */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"
import { draftListItemFields } from "../versions/domain.js"

const strict = { onExcessProperty: "error", errors: "all" } as const

/** An optional property that, when present, holds a value (never `undefined`). */
const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** A message that replaces whatever the inner checks would say. */
const says = (message: string) => ({ message: () => ({ message, override: true }) })

/** The nine kinds of question a Flow may ask. */
export const questionTypes = [
  "text",
  "long_text",
  "number",
  "boolean",
  "select",
  "multi_select",
  "email",
  "url",
  "date"
] as const
/** The kind of a question. */
export type QuestionType = (typeof questionTypes)[number]

/** The question types that offer choices (and so need `options`). */
export const choiceQuestionTypes: ReadonlyArray<QuestionType> = ["select", "multi_select"]

/** Whether a question of this type offers choices. */
export const offersChoices = (type: QuestionType): boolean => choiceQuestionTypes.includes(type)

/** Most questions one Flow may ask. */
export const maxQuestions = 50
/** Most options one question may offer. */
export const maxOptions = 100
/** Most steps one Flow may run. */
export const maxSteps = 20
/** Longest template (prompt, query, message, output) in characters. */
export const maxTemplateLength = 20_000

const QuestionTypeSchema = Schema.Literal(...questionTypes).annotations(says(`type must be one of ${questionTypes.join(", ")}`))

const Name = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({
  ...says("name must be 1 to 200 characters"),
  jsonSchema: { type: "string", minLength: 1, maxLength: 200 }
})
const Description = Schema.String.pipe(Schema.maxLength(2_000)).annotations({
  ...says("description must be at most 2000 characters")
})
const Label = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({
  ...says("label must be 1 to 200 characters"),
  jsonSchema: { type: "string", minLength: 1, maxLength: 200 }
})
const Option = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({
  ...says("an option must be 1 to 200 characters"),
  jsonSchema: { type: "string", minLength: 1, maxLength: 200 }
})
const Options = Schema.Array(Option).pipe(
  Schema.minItems(1, { message: () => "options must offer at least one choice" }),
  Schema.maxItems(maxOptions, { message: () => `options may offer at most ${maxOptions} choices` }),
  Schema.filter(
    (options) => {
      const repeated = options.find((option, index) => options.indexOf(option) !== index)
      return repeated === undefined ? undefined : `options offers "${repeated}" more than once`
    },
    { jsonSchema: { uniqueItems: true } }
  )
)

/** A template: text with `{{variable}}` placeholders (see `templates.ts`). */
export const TemplateSource = Schema.String.pipe(
  Schema.minLength(1, { message: () => "a template must not be empty" }),
  Schema.maxLength(maxTemplateLength, { message: () => `a template must be at most ${maxTemplateLength} characters` })
).annotations({ description: "Text with `{{variable}}` placeholders naming inputs or earlier steps." })

/** A step's variable name: what later steps and `output` call its result. */
export const StepName = Schema.String.pipe(
  Schema.pattern(/^[a-z_][a-z0-9_]{0,63}$/, {
    message: () => "a step name must be 1 to 64 lowercase letters, digits or underscores, not starting with a digit"
  })
).annotations({ description: "The variable this step binds, for later steps and `output`." })

/** One question of a Flow; its parameter name derives from `label`. */
export const Question = Schema.Struct({
  label: Label,
  type: QuestionTypeSchema,
  required: optional(Schema.Boolean).annotations({ description: "Default false." }),
  options: optional(Options).annotations({ description: "The choices of a `select` or `multi_select` question (only those)." }),
  description: optional(Description)
}).pipe(
  Schema.filter(
    (question) => {
      if (offersChoices(question.type) && question.options === undefined)
        return { path: ["options"], message: `a ${question.type} question needs options` }
      if (!offersChoices(question.type) && question.options !== undefined)
        return { path: ["options"], message: `only select and multi_select questions take options, not ${question.type}` }
      return undefined
    },
    { jsonSchema: {} }
  )
).annotations({
  identifier: "FlowQuestion",
  parseOptions: strict,
  examples: [{ label: "Company name", type: "text", required: true }]
})
export type Question = typeof Question.Type

/** A model call on a rendered template. */
export const PromptStep = Schema.Struct({
  type: Schema.Literal("prompt"),
  name: StepName,
  template: TemplateSource,
  model: optional(
    Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({
      ...says("model must be 1 to 200 characters"),
      description:
        "The model to call, kept as named. Without it the step calls the server's default model (`svc serve --model`, `SVC_MODEL`, else `builtin`), resolved at run time; the draft shows it as `defaultModel`."
    })
  )
}).annotations({ identifier: "FlowPromptStep", parseOptions: strict })

const KnowledgebaseIds = Schema.Array(Uuid).pipe(
  Schema.maxItems(50, { message: () => "knowledgebaseIds may name at most 50 Knowledgebases" })
)

/** A Knowledgebase search on a rendered query. */
export const SearchStep = Schema.Struct({
  type: Schema.Literal("search"),
  name: StepName,
  query: TemplateSource,
  knowledgebaseIds: optional(KnowledgebaseIds)
}).annotations({ identifier: "FlowSearchStep", parseOptions: strict })

/** A message to an Agent (its published version). */
export const AgentStep = Schema.Struct({
  type: Schema.Literal("agent"),
  name: StepName,
  agentId: Uuid,
  message: TemplateSource
}).annotations({ identifier: "FlowAgentStep", parseOptions: strict })

/** Pure interpolation. */
export const TemplateStep = Schema.Struct({
  type: Schema.Literal("template"),
  name: StepName,
  template: TemplateSource
}).annotations({ identifier: "FlowTemplateStep", parseOptions: strict })

/** One step of a Flow; each binds the variable `name`. */
export const Step = Schema.Union(PromptStep, SearchStep, AgentStep, TemplateStep).annotations({ identifier: "FlowStep" })
export type Step = typeof Step.Type

const Questions = Schema.Array(Question).pipe(
  Schema.maxItems(maxQuestions, { message: () => `a Flow may ask at most ${maxQuestions} questions` })
)
const Steps = Schema.Array(Step).pipe(Schema.maxItems(maxSteps, { message: () => `a Flow may run at most ${maxSteps} steps` }))

/** Body of `POST /flows`: a whole Flow definition (and what a draft holds). */
export const FlowDefinition = Schema.Struct({
  name: Name,
  description: optional(Description),
  questions: Questions,
  steps: Steps,
  output: optional(TemplateSource.annotations({ description: "A template over inputs and step variables; default the last step's variable." }))
}).annotations({
  identifier: "FlowDefinition",
  parseOptions: strict,
  examples: [
    {
      name: "Lead qualification",
      questions: [
        { label: "Company name", type: "text", required: true },
        { label: "Budget", type: "select", options: ["< 10k", "10k-50k", "> 50k"], required: true }
      ],
      steps: [{ type: "prompt", name: "assessment", template: "Qualify {{company_name}} with a budget of {{budget}}." }],
      output: "{{assessment}}"
    }
  ]
})
export type FlowDefinition = typeof FlowDefinition.Type

/**
 * Body of `PATCH /flows/{id}/draft`: the properties to replace, at least one. `output: null`
 * removes the output template. The merged draft is checked whole (`applyDraftPatch`, then
 * `checkFlowDefinition`).
 */
export const FlowDraftPatch = Schema.Struct({
  name: optional(Name),
  description: optional(Description),
  questions: optional(Questions),
  steps: optional(Steps),
  output: optional(Schema.NullOr(TemplateSource))
}).pipe(
  Schema.filter((patch) => (Object.keys(patch).length > 0 ? undefined : "the patch must change at least one property"), {
    jsonSchema: { minProperties: 1 }
  })
).annotations({
  identifier: "FlowDraftPatch",
  parseOptions: strict,
  examples: [{ output: "Assessment: {{assessment}}" }]
})
export type FlowDraftPatch = typeof FlowDraftPatch.Type

/** The draft a patch gives: the current definition with the patch's properties replaced. */
export const applyDraftPatch = (current: FlowDefinition, patch: FlowDraftPatch): FlowDefinition => {
  const description = patch.description ?? current.description
  const output = patch.output === null ? undefined : (patch.output ?? current.output)
  return {
    name: patch.name ?? current.name,
    ...(description === undefined ? {} : { description }),
    questions: patch.questions ?? current.questions,
    steps: patch.steps ?? current.steps,
    ...(output === undefined ? {} : { output })
  }
}

/** One input of a Flow as `GET /flows` lists it: a question under its parameter name. */
export const FlowInput = Schema.Struct({
  name: Schema.String.annotations({ description: "The parameter name, derived from the label." }),
  label: Schema.String,
  type: QuestionTypeSchema,
  options: optional(Schema.Array(Schema.String)),
  required: Schema.Boolean,
  description: optional(Schema.String)
}).annotations({
  identifier: "FlowInput",
  examples: [{ name: "company_name", label: "Company name", type: "text", required: true }]
})
export type FlowInput = typeof FlowInput.Type

/** A Flow's inputs as one JSON Schema (draft 2020-12): what `POST /flows/{id}/run` takes as `inputs`. */
export const FlowInputsSchema = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "FlowInputsSchema",
  description: "The inputs as a JSON Schema (draft 2020-12): an object with a property per parameter, required ones listed, nothing else allowed."
})

const derivedFields = {
  conversational: Schema.Boolean.annotations({
    description: "True for a Flow without questions: it is run with `message` and `conversation_id`, like an Agent."
  }),
  inputs: Schema.Array(FlowInput),
  inputsSchema: FlowInputsSchema
}

/** A Flow's draft (`POST /flows`, `GET/PATCH /flows/{id}/draft`): the definition with what derives from it. */
export const FlowDraft = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  description: Schema.String,
  questions: Schema.Array(Question),
  steps: Schema.Array(Step),
  output: Schema.NullOr(Schema.String).annotations({ description: "The output template; null: the last step's variable." }),
  ...derivedFields,
  defaultModel: Schema.String.annotations({
    description:
      "The server's default model at the time of this read: what a `prompt` step without `model` calls (resolved at run time; `steps` show each step as written)."
  }),
  publishedVersion: Schema.NullOr(Schema.Int).annotations({ description: "The published version; null until the first publish." }),
  createdAt: DateTime,
  updatedAt: DateTime
}).annotations({ identifier: "FlowDraft" })
export type FlowDraft = typeof FlowDraft.Type

/** A published Flow (`GET /flows/{id}`, `GET /flows`): its published version's inputs. */
export const Flow = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  description: Schema.String,
  ...derivedFields,
  version: Schema.Int,
  publishedAt: DateTime
}).annotations({
  identifier: "Flow",
  examples: [
    {
      id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
      name: "Lead qualification",
      description: "",
      conversational: false,
      inputs: [{ name: "company_name", label: "Company name", type: "text", required: true }],
      inputsSchema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { company_name: { title: "Company name", type: "string", minLength: 1 } },
        required: ["company_name"],
        additionalProperties: false
      },
      version: 1,
      publishedAt: "2026-11-21T10:00:00.000Z"
    }
  ]
})
export type Flow = typeof Flow.Type

/** A Flow as listed with `include=drafts`. */
export const FlowDraftItem = Schema.Struct(draftListItemFields).annotations({ identifier: "FlowDraftItem" })
export type FlowDraftItem = typeof FlowDraftItem.Type

/** Fields the published listing may be narrowed to. */
export const flowFields = ["id", "name", "description", "conversational", "inputs", "inputsSchema", "version", "publishedAt"] as const
