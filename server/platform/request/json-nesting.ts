/**
 * How deeply a JSON request body may nest arrays and objects. No operation's input comes near it
 * (the deepest, a Flow's steps or an App's JSON Schemas, use a dozen levels), and a body nested
 * thousands of levels deep would otherwise exhaust the stack of whatever walks it (a decoder, an
 * error's description). Checked by scanning the text before it is parsed: one pass, no allocation.
 */
import { InvalidRequest } from "../errors.js"

/** The deepest nesting of arrays and objects a JSON request body may have. */
export const maxJsonNesting = 64

const openBrace = 0x7b
const openBracket = 0x5b
const closeBrace = 0x7d
const closeBracket = 0x5d
const quote = 0x22
const backslash = 0x5c

/** Whether `text` (JSON, well-formed or not) opens more than `limit` arrays and objects inside one another. */
export const jsonNestsDeeperThan = (text: string | Uint8Array, limit: number = maxJsonNesting): boolean => {
  const codeAt = typeof text === "string" ? (index: number) => text.charCodeAt(index) : (index: number) => text[index]!
  let depth = 0
  let inString = false
  for (let index = 0; index < text.length; index++) {
    const code = codeAt(index)
    if (inString) {
      if (code === backslash) index++
      else if (code === quote) inString = false
    } else if (code === quote) {
      inString = true
    } else if (code === openBrace || code === openBracket) {
      if (++depth > limit) return true
    } else if (code === closeBrace || code === closeBracket) {
      depth--
    }
  }
  return false
}

/** The refusal of a body nested deeper than {@link maxJsonNesting}. */
export const tooDeeplyNested = (): InvalidRequest =>
  new InvalidRequest({ message: `The JSON body nests arrays and objects more than ${maxJsonNesting} levels deep.` })
