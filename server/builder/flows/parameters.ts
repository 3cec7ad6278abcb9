/**
 * Parameter names derived from question labels (`Company name` -> `company_name`) and the save-time
 * rules on them: a label must give a name, and no two labels may give the same one.
 */

/** Prefixed to a name that would start with a digit, so it stays an identifier. */
export const digitPrefix = "q_"

/** Letters NFKD does not decompose into ASCII, spelled out. */
const spelledOut: Readonly<Record<string, string>> = {
  ß: "ss",
  æ: "ae",
  œ: "oe",
  ø: "o",
  ł: "l",
  đ: "d",
  ð: "d",
  þ: "th",
  ı: "i"
}

/**
 * The parameter name a label gives, or null when it gives none: NFKD, diacritics stripped,
 * lowercase, every run of other characters one `_`, no `_` at either end, and a name that would
 * start with a digit prefixed with `q_`.
 */
export const parameterName = (label: string): string | null => {
  const name = label
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[ßæœøłđðþı]/g, (letter) => spelledOut[letter] ?? letter)
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
  if (name === "") return null
  return /^[0-9]/.test(name) ? `${digitPrefix}${name}` : name
}

/** A question's label where it sits in the body (`questions[2]`). */
export interface LabelAt {
  readonly path: string
  readonly label: string
}

/** A label's parameter, where it sits. */
export interface ParameterAt {
  readonly path: string
  readonly label: string
  readonly name: string
}

/** The parameters of a Flow's labels, and every problem with them (all at once). */
export interface DerivedParameters {
  readonly parameters: ReadonlyArray<ParameterAt>
  readonly problems: ReadonlyArray<string>
}

/**
 * Derives every label's parameter. A label that gives no name, or the same name as an earlier label,
 * is a problem naming its path (and, for a collision, both labels).
 */
export const deriveParameters = (labels: ReadonlyArray<LabelAt>): DerivedParameters => {
  const parameters: Array<ParameterAt> = []
  const problems: Array<string> = []
  const firstByName = new Map<string, LabelAt>()
  for (const at of labels) {
    const name = parameterName(at.label)
    if (name === null) {
      problems.push(`${at.path}.label: "${at.label}" gives no parameter name; use letters or digits`)
      continue
    }
    const first = firstByName.get(name)
    if (first !== undefined) {
      problems.push(
        `${at.path}.label: "${at.label}" gives the parameter name ${name}, as ${first.path}.label "${first.label}" does; labels must give different names`
      )
      continue
    }
    firstByName.set(name, at)
    parameters.push({ ...at, name })
  }
  return { parameters, problems }
}
