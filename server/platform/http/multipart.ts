/**
 * Reads a `multipart/form-data` body into memory within explicit limits (the platform's defaults
 * are unlimited): few parts, small fields, one file within the request limit. Over a limit answers
 * 413 `payload_too_large`; a malformed body 400 `invalid_request`.
 */
import { type HttpServerRequest, Multipart } from "@effect/platform"
import { Chunk, Effect, Option, Stream } from "effect"
import { InvalidRequest, PayloadTooLarge } from "../errors.js"

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

const describe = (limits: MultipartLimits, reason: Multipart.MultipartError["reason"]) => {
  switch (reason) {
    case "FileTooLarge":
    case "BodyTooLarge":
      return new PayloadTooLarge({ message: `A request body is limited to ${limits.maxTotalBytes / 1_000_000} MB.` })
    case "FieldTooLarge":
      return new PayloadTooLarge({ message: `A form field is limited to ${limits.maxFieldBytes / 1000} KB.` })
    case "TooManyParts":
      return new InvalidRequest({ message: `A form may have at most ${limits.maxParts} parts.` })
    default:
      return new InvalidRequest({ message: "The multipart/form-data body could not be read." })
  }
}

/** Reads the request's multipart body within `limits`; a field or file given twice is refused. */
export const readMultipart = (request: HttpServerRequest.HttpServerRequest, limits: MultipartLimits) =>
  Effect.gen(function* () {
    if (!/;\s*boundary=/i.test(request.headers["content-type"] ?? "")) {
      return yield* new InvalidRequest({ message: "multipart/form-data needs a boundary parameter in Content-Type." })
    }
    const fields = new Map<string, string>()
    const files: Array<UploadedFile> = []
    const parts = Multipart.withLimitsStream(request.multipartStream, {
      maxParts: Option.some(limits.maxParts),
      maxFieldSize: limits.maxFieldBytes,
      maxFileSize: Option.some(limits.maxFileBytes),
      maxTotalSize: Option.some(limits.maxTotalBytes)
    })
    yield* Stream.runForEach(parts, (part) =>
      Effect.gen(function* () {
        if (fields.has(part.key) || files.some((file) => file.field === part.key)) {
          return yield* new InvalidRequest({ message: `${part.key}: given more than once.` })
        }
        if (Multipart.isField(part)) {
          fields.set(part.key, part.value)
          return
        }
        const chunks = yield* Stream.runCollect(part.content)
        files.push({ field: part.key, name: part.name, contentType: part.contentType, bytes: Buffer.concat(Chunk.toArray(chunks)) })
      })
    ).pipe(
      Effect.catchTag("MultipartError", (error) => Effect.fail(describe(limits, error.reason))),
      Effect.catchAllDefect(() => Effect.fail(new InvalidRequest({ message: "The multipart/form-data body could not be read." })))
    )
    return { fields, files } satisfies MultipartBody
  })
