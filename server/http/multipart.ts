/**
 * Reads a `multipart/form-data` body into memory within explicit limits (the platform's defaults
 * are unlimited): few parts, small fields, one file within the request limit. Over a limit answers
 * 413 `payload_too_large`; a malformed or incomplete body 400 `invalid_request`.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Effect, Either } from "effect"
import { InvalidRequest, PayloadTooLarge } from "../platform/errors.js"
import { readBoundedBody } from "./body-limit.js"
import { type FormPart, parseFormData } from "./form-data.js"
import { parseMediaType } from "./media-type.js"

/** Limits of one multipart body. */
export interface MultipartLimits {
  readonly maxParts: number
  readonly maxFieldBytes: number
  readonly maxFileBytes: number
  readonly maxTotalBytes: number
}

/** A file part read into memory. */
export interface UploadedFile {
  readonly field: string
  readonly name: string
  readonly contentType: string
  readonly bytes: Uint8Array
}

/** A multipart body read into memory. */
export interface MultipartBody {
  readonly fields: ReadonlyMap<string, string>
  readonly files: ReadonlyArray<UploadedFile>
}

const decodeField = (part: FormPart): string => {
  try {
    return new TextDecoder(part.charset ?? "utf-8").decode(part.bytes)
  } catch {
    return new TextDecoder("utf-8").decode(part.bytes)
  }
}

const malformed = (problem: string) =>
  new InvalidRequest({ message: `The multipart/form-data body could not be read: ${problem}.` })

/**
 * Reads the request's multipart body within `limits`; a field or file given twice is refused. The
 * whole body is read first, so a body cut short is refused once it has arrived, never waited on.
 */
export const readMultipart = (request: HttpServerRequest.HttpServerRequest, limits: MultipartLimits) =>
  Effect.gen(function* () {
    const boundary = parseMediaType(request.headers["content-type"] ?? "")?.parameters.get("boundary")
    if (boundary === undefined || boundary === "") {
      return yield* new InvalidRequest({ message: "multipart/form-data needs a boundary parameter in Content-Type." })
    }
    const body = yield* readBoundedBody(request, limits.maxTotalBytes)
    if (body._tag === "TooLarge") {
      return yield* new PayloadTooLarge({ message: `A request body is limited to ${limits.maxTotalBytes / 1_000_000} MB.` })
    }
    if (body._tag === "Broken") return yield* malformed("the connection broke off")
    const parts = parseFormData(body.bytes, boundary)
    if (Either.isLeft(parts)) return yield* malformed(parts.left)
    if (parts.right.length > limits.maxParts) {
      return yield* new InvalidRequest({ message: `A form may have at most ${limits.maxParts} parts.` })
    }
    const fields = new Map<string, string>()
    const files: Array<UploadedFile> = []
    for (const part of parts.right) {
      if (fields.has(part.name) || files.some((file) => file.field === part.name)) {
        return yield* new InvalidRequest({ message: `${part.name}: given more than once.` })
      }
      if (part.isFile) {
        if (part.bytes.byteLength > limits.maxFileBytes) {
          return yield* new PayloadTooLarge({ message: `A file is limited to ${limits.maxFileBytes / 1_000_000} MB.` })
        }
        files.push({ field: part.name, name: part.filename ?? part.name, contentType: part.contentType, bytes: part.bytes })
      } else {
        if (part.bytes.byteLength > limits.maxFieldBytes) {
          return yield* new PayloadTooLarge({ message: `A form field is limited to ${limits.maxFieldBytes / 1000} KB.` })
        }
        fields.set(part.name, decodeField(part))
      }
    }
    return { fields, files } satisfies MultipartBody
  })
