/**
 * Flow templates: text with `{{variable}}` placeholders (whitespace inside the braces allowed).
 * Every `{{` opens a placeholder; anything but an identifier inside is refused, never passed
 * through. A lone `}}` is ordinary text. Also the save-time check that each step uses only input
 * parameters and variables of earlier steps.
 */
import { Either } from "effect"

/** A piece of a parsed template. */
export type TemplatePart =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "variable"; readonly name: string }

/** A parsed template. */
export interface Template {
  readonly source: string
  readonly parts: ReadonlyArray<TemplatePart>
}

/** A value a variable may hold: an input's value or a step's text. */
export type TemplateValue = string | number | boolean | ReadonlyArray<string>

const placeholder = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/y

const excerpt = (text: string): string => (text.length > 40 ? `${text.slice(0, 40)}…` : text)

/** A template read as far as it goes: its well-formed parts and every syntax problem. */
export interface ScannedTemplate {
  readonly parts: ReadonlyArray<TemplatePart>
  readonly problems: ReadonlyArray<string>
}

/** Reads a template, keeping what is well formed and naming each problem (`unclosed {{ at character 7`). */
export const scanTemplate = (source: string): ScannedTemplate => {
  const parts: Array<TemplatePart> = []
  const problems: Array<string> = []
  let textStart = 0
  let at = source.indexOf("{{")
  while (at !== -1) {
    if (at > textStart) parts.push({ kind: "text", text: source.slice(textStart, at) })
    placeholder.lastIndex = at
    const match = placeholder.exec(source)
    if (match !== null) {
      parts.push({ kind: "variable", name: match[1]! })
      textStart = at + match[0].length
    } else {
      const close = source.indexOf("}}", at + 2)
      if (close === -1) {
        problems.push(`unclosed {{ at character ${at + 1}`)
        textStart = source.length
        break
      }
      problems.push(
        `${excerpt(source.slice(at, close + 2))} at character ${at + 1} is not a {{variable}} (letters, digits and underscores)`
      )
      textStart = close + 2
    }
    at = source.indexOf("{{", textStart)
  }
  if (textStart < source.length) parts.push({ kind: "text", text: source.slice(textStart) })
  return { parts, problems }
}

/** Parses a template, or gives every syntax problem in it. */
export const parseTemplate = (source: string): Either.Either<Template, ReadonlyArray<string>> => {
  const { parts, problems } = scanTemplate(source)
  return problems.length > 0 ? Either.left(problems) : Either.right({ source, parts })
}

/** The variables a template uses, each once, in order of first use. */
export const templateVariables = (template: Pick<Template, "parts">): ReadonlyArray<string> => [
  ...new Set(template.parts.flatMap((part) => (part.kind === "variable" ? [part.name] : [])))
]

const asText = (value: TemplateValue): string =>
  typeof value === "string" ? value : Array.isArray(value) ? value.join(", ") : String(value)

/**
 * Fills a template's placeholders: text as it is, numbers and booleans as JSON spells them, a list
 * of choices joined with `, `. A variable without a value (an optional input left out) is empty.
 */
export const renderTemplate = (template: Template, values: Readonly<Record<string, TemplateValue | undefined>>): string =>
  template.parts
    .map((part) => {
      if (part.kind === "text") return part.text
      const value = Object.hasOwn(values, part.name) ? values[part.name] : undefined
      return value === undefined ? "" : asText(value)
    })
    .join("")

/** A step's templates as the check sees them, with where the step sits. */
export interface StepTemplates {
  /** `steps[1]` */
  readonly path: string
  /** The variable the step binds; undefined when the body gives none usable. */
  readonly name: string | undefined
  /** Each template of the step by field (`template`, `query`, `message`); undefined when not a string. */
  readonly templates: ReadonlyArray<{ readonly field: string; readonly source: string | undefined }>
}

/** What the variable check needs: the names in scope from the start, the steps, the output. */
export interface VariableScope {
  /** Each input parameter (or `message` of a Flow without questions) with where it comes from. */
  readonly parameters: ReadonlyMap<string, string>
  readonly steps: ReadonlyArray<StepTemplates>
  readonly output: string | undefined
}

const stepLabel = (step: StepTemplates): string => (step.name === undefined ? step.path : `${step.path} (${step.name})`)

/**
 * Every variable problem of a Flow at once: template syntax, unknown variables, variables of a
 * later step or of the step itself, step names bound twice or clashing with a parameter, and the
 * output's variables (over every parameter and step).
 */
export const checkVariables = (scope: VariableScope): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const boundBy = new Map<string, number>()
  scope.steps.forEach((step, index) => {
    if (step.name !== undefined && !boundBy.has(step.name)) boundBy.set(step.name, index)
  })
  const hint = (name: string): string => {
    const lower = name.toLowerCase()
    return lower !== name && (scope.parameters.has(lower) || boundBy.has(lower)) ? ` (did you mean {{${lower}}}?)` : ""
  }
  const checkTemplate = (where: string, field: string | null, source: string, index: number): void => {
    const inField = field === null ? "" : ` in ${field}`
    const scanned = scanTemplate(source)
    for (const problem of scanned.problems) problems.push(`${where}: ${problem}${inField}`)
    for (const name of templateVariables(scanned)) {
      if (scope.parameters.has(name)) continue
      const binder = boundBy.get(name)
      if (binder !== undefined && binder < index) continue
      if (binder === index) problems.push(`${where}: {{${name}}}${inField} is this step's own variable`)
      else if (binder !== undefined) problems.push(`${where}: {{${name}}}${inField} is bound by a later step, ${scope.steps[binder]!.path}`)
      else problems.push(`${where}: unknown variable {{${name}}}${inField}${hint(name)}`)
    }
  }
  scope.steps.forEach((step, index) => {
    const where = stepLabel(step)
    if (step.name !== undefined) {
      const origin = scope.parameters.get(step.name)
      const first = boundBy.get(step.name)!
      if (origin !== undefined) problems.push(`${where}: the name ${step.name} is already an input parameter (${origin})`)
      else if (first !== index) problems.push(`${where}: the name ${step.name} is already bound by ${scope.steps[first]!.path}`)
    }
    for (const { field, source } of step.templates) if (source !== undefined) checkTemplate(where, field, source, index)
  })
  if (scope.output !== undefined) checkTemplate("output", null, scope.output, scope.steps.length)
  return problems
}
