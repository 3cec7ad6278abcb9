/**
 * Parses a complete `multipart/form-data` body held in memory (RFC 7578 over RFC 2046). Unlike a
 * streaming parser it always reaches a verdict: a body that ends before its closing boundary, a
 * part whose headers never end with a blank line, or a body with no boundary line at all is
 * reported as malformed instead of waiting for bytes that will never come.
 */
import { Either } from "effect"
import { parseMediaType, parseParameters } from "./media-type.js"

/** One part of a form: a field, or a file when it has a filename (or is `application/octet-stream`). */
export interface FormPart {
  readonly name: string
  readonly filename: string | undefined
  /** The part's media type (`text/plain` for a field without one, `application/octet-stream` for a file). */
  readonly contentType: string
  readonly charset: string | undefined
  readonly bytes: Uint8Array
  readonly isFile: boolean
}

const crlf = Buffer.from("\r\n")
const blankLine = Buffer.from("\r\n\r\n")

const readHeaders = (text: string): Map<string, string> | string => {
  const headers = new Map<string, string>()
  let last: string | undefined
  for (const line of text === "" ? [] : text.split("\r\n")) {
    if (/^[\t ]/.test(line) && last !== undefined) {
      headers.set(last, `${headers.get(last)} ${line.trim()}`)
      continue
    }
    const colon = line.indexOf(":")
    if (colon <= 0) return "a part header line is not `Name: value`"
    last = line.slice(0, colon).trim().toLowerCase()
    headers.set(last, line.slice(colon + 1).trim())
  }
  return headers
}

const decodeExtended = (value: string): string | undefined => {
  const match = /^([^']*)'[^']*'(.*)$/.exec(value)
  if (!match) return undefined
  try {
    return decodeURIComponent(match[2] ?? "")
  } catch {
    return undefined
  }
}

const readPart = (headerText: string, bytes: Uint8Array): FormPart | string => {
  const headers = readHeaders(headerText)
  if (typeof headers === "string") return headers
  const disposition = headers.get("content-disposition") ?? ""
  const semicolon = disposition.indexOf(";")
  const kind = (semicolon < 0 ? disposition : disposition.slice(0, semicolon)).trim().toLowerCase()
  const parameters = semicolon < 0 ? new Map<string, string>() : parseParameters(disposition.slice(semicolon), true)
  const name = parameters?.get("name")
  if (kind !== "form-data" || name === undefined) return "a part has no `Content-Disposition: form-data; name=...` header"
  const extended = parameters?.get("filename*")
  const filename = (extended === undefined ? undefined : decodeExtended(extended)) ?? parameters?.get("filename")
  const declared = headers.get("content-type")
  const media = declared === undefined || declared === "" ? null : parseMediaType(declared)
  if (declared !== undefined && declared !== "" && media === null) return `part '${name}' has an invalid Content-Type`
  const contentType = media?.essence ?? (filename === undefined ? "text/plain" : "application/octet-stream")
  return {
    name,
    filename,
    contentType,
    charset: media?.parameters.get("charset"),
    bytes,
    isFile: filename !== undefined || contentType === "application/octet-stream"
  }
}

/**
 * Splits `body` into its parts; `Left` holds what is wrong with it (for a 400 message) when it is
 * not a complete multipart document delimited by `boundary`.
 */
export const parseFormData = (body: Buffer, boundary: string): Either.Either<ReadonlyArray<FormPart>, string> => {
  const delimiter = Buffer.from(`--${boundary}`)
  const nextDelimiter = Buffer.from(`\r\n--${boundary}`)
  const closing = `the body ends before its closing boundary '--${boundary}--'`
  let position = body.subarray(0, delimiter.length).equals(delimiter) ? 0 : body.indexOf(nextDelimiter)
  if (position < 0) return Either.left(`no boundary line '--${boundary}' was found`)
  if (position > 0) position += crlf.length
  const parts: Array<FormPart> = []
  for (;;) {
    position += delimiter.length
    if (body.subarray(position, position + 2).toString("latin1") === "--") return Either.right(parts)
    while (body[position] === 0x20 || body[position] === 0x09) position++
    if (position >= body.length) return Either.left(closing)
    if (!body.subarray(position, position + 2).equals(crlf)) return Either.left("a boundary line is followed by other text")
    position += crlf.length
    const next = body.indexOf(nextDelimiter, position)
    if (next < 0) return Either.left(closing)
    let contentStart: number
    if (body.subarray(position, position + 2).equals(crlf)) {
      contentStart = position + crlf.length
    } else {
      const headerEnd = body.indexOf(blankLine, position)
      if (headerEnd < 0 || headerEnd + blankLine.length > next) return Either.left("a part's headers are not followed by a blank line")
      contentStart = headerEnd + blankLine.length
    }
    const headerText = body.subarray(position, Math.max(position, contentStart - blankLine.length)).toString("utf8")
    const part = readPart(headerText, body.subarray(contentStart, next))
    if (typeof part === "string") return Either.left(part)
    parts.push(part)
    position = next + crlf.length
  }
}
