/**
 * `Content-Type` values read by the rules of RFC 9110 §8.3.1: `type/subtype` followed by
 * `; name=value` parameters (tokens or quoted strings). Type, subtype and parameter names are
 * case-insensitive and come back in lower case.
 */

/** A parsed media type. */
export interface MediaType {
  /** `type/subtype`, lower case (e.g. `application/json`). */
  readonly essence: string
  readonly type: string
  readonly subtype: string
  readonly parameters: ReadonlyMap<string, string>
}

const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/**
 * Parses `; name=value` parameters. Names must be tokens; values tokens or quoted strings, except
 * that `lenient` takes any unquoted text up to the next `;` (as filenames are sometimes sent).
 */
export const parseParameters = (text: string, lenient = false): Map<string, string> | null => {
  const parameters = new Map<string, string>()
  let rest = text
  while (rest.length > 0) {
    rest = rest.replace(/^[\t ;]+/, "")
    if (rest.length === 0) break
    const equals = rest.indexOf("=")
    if (equals <= 0) return null
    const name = rest.slice(0, equals).trim().toLowerCase()
    if (!token.test(name)) return null
    rest = rest.slice(equals + 1)
    let value = ""
    if (rest.startsWith('"')) {
      let index = 1
      for (; index < rest.length && rest[index] !== '"'; index++) {
        if (rest[index] === "\\") index++
        value += rest[index] ?? ""
      }
      if (index >= rest.length) return null
      rest = rest.slice(index + 1).replace(/^[\t ]+/, "")
      if (rest.length > 0 && !rest.startsWith(";")) return null
    } else {
      const end = rest.indexOf(";")
      value = (end < 0 ? rest : rest.slice(0, end)).trim()
      rest = end < 0 ? "" : rest.slice(end)
      if (!lenient && !token.test(value)) return null
    }
    if (!parameters.has(name)) parameters.set(name, value)
  }
  return parameters
}

/** Parses a `Content-Type` header value; null when it is not a valid media type. */
export const parseMediaType = (value: string): MediaType | null => {
  const semicolon = value.indexOf(";")
  const essence = (semicolon < 0 ? value : value.slice(0, semicolon)).trim().toLowerCase()
  const slash = essence.indexOf("/")
  const type = essence.slice(0, slash)
  const subtype = essence.slice(slash + 1)
  if (slash <= 0 || !token.test(type) || !token.test(subtype)) return null
  const parameters = semicolon < 0 ? new Map<string, string>() : parseParameters(value.slice(semicolon))
  return parameters === null ? null : { essence, type, subtype, parameters }
}

/** Whether a media type is JSON: `application/json` or any `application/*+json`. */
export const isJsonMediaType = (media: MediaType): boolean =>
  media.type === "application" && (media.subtype === "json" || media.subtype.endsWith("+json"))
