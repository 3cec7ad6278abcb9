/**
 * File uploads: a `multipart/form-data` body encoded by the SDK itself, with an exact length, so it can
 * be streamed (and re-streamed on a retry) while reporting how many bytes have been sent.
 */
import { randomBytes } from "node:crypto"
import type { RequestOptions } from "./options.js"

/**
 * The API's request body limit (4.5 MB). The SDK refuses a larger body before sending it: the server
 * answers such a request at once and closes the connection, which Node's HTTP clients report as a
 * broken pipe instead of the answer.
 */
export const maxRequestBytes = 4_500_000

/** The bytes of an uploaded file: a `Uint8Array` (a `Buffer` too) or a `Blob` (a `File` too). */
export type UploadData = Blob | Uint8Array

/** How far an upload is: bytes of the request body sent so far, of `total`, in attempt number `attempt` (1-based). */
export interface UploadProgress {
  readonly sent: number
  readonly total: number
  /** 1 for the first attempt; a retried upload starts again from 0 with the next number. */
  readonly attempt: number
}

/** Options of an upload call: those of any call, and a progress callback. */
export interface UploadOptions extends RequestOptions {
  /**
   * Called as the body is sent, with `sent` growing (never shrinking within an attempt) up to `total`;
   * the last call of a successful attempt has `sent === total`.
   */
  readonly onProgress?: ((progress: UploadProgress) => void) | undefined
}

/** Optional properties of `T` may also be given as `undefined` (treated as absent). */
type Loose<T> = { [K in keyof T]: T[K] | ({} extends Pick<T, K> ? undefined : never) }

/**
 * The fields of a multipart upload: the operation's form fields, with the file field (`FileKey`) as bytes
 * or a `Blob`, plus how to name and type that file part.
 */
export type MultipartUpload<Fields, FileKey extends keyof Fields> = Loose<Omit<Fields, FileKey>> & {
  readonly [K in FileKey]: UploadData
} & {
  /** The file part's file name (the service may derive the type and a default name from it). Default: a `File`'s name, else `upload`. */
  readonly fileName?: string | undefined
  /** The file part's `Content-Type`. Default: a `Blob`'s type, else `application/octet-stream`. */
  readonly contentType?: string | undefined
}

/** One part of a form. */
type Part =
  | { readonly name: string; readonly value: string }
  | { readonly name: string; readonly fileName: string; readonly contentType: string; readonly data: UploadData }

/** The largest chunk handed to the connection at once, so progress is reported at least this often. */
const chunkBytes = 64 * 1024

const encoder = new TextEncoder()

/** Quotes a header parameter the way browsers do: `"` and line breaks percent-encoded. */
const quoted = (text: string): string => `"${text.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A")}"`

const sizeOf = (data: UploadData): number => (data instanceof Uint8Array ? data.byteLength : data.size)

async function* chunksOf(data: UploadData): AsyncGenerator<Uint8Array> {
  if (data instanceof Uint8Array) {
    for (let at = 0; at < data.byteLength; at += chunkBytes) yield data.subarray(at, at + chunkBytes)
    return
  }
  const reader = data.stream().getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      const bytes = value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBuffer)
      for (let at = 0; at < bytes.byteLength; at += chunkBytes) yield bytes.subarray(at, at + chunkBytes)
    }
  } finally {
    reader.releaseLock()
  }
}

/** A `multipart/form-data` body with a known length that can be streamed any number of times. */
export class MultipartBody {
  /** The `Content-Type` header, boundary included. */
  readonly contentType: string
  /** The exact length of the encoded body, in bytes (`Content-Length`). */
  readonly length: number
  readonly #pieces: ReadonlyArray<Uint8Array | UploadData>

  constructor(parts: ReadonlyArray<Part>) {
    const boundary = `----svc-sdk-${randomBytes(16).toString("hex")}`
    this.contentType = `multipart/form-data; boundary=${boundary}`
    const pieces: Array<Uint8Array | UploadData> = []
    for (const part of parts) {
      if ("value" in part) {
        pieces.push(encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name=${quoted(part.name)}\r\n\r\n${part.value}\r\n`))
        continue
      }
      const disposition = `form-data; name=${quoted(part.name)}; filename=${quoted(part.fileName)}`
      pieces.push(encoder.encode(`--${boundary}\r\nContent-Disposition: ${disposition}\r\nContent-Type: ${part.contentType}\r\n\r\n`))
      pieces.push(part.data)
      pieces.push(encoder.encode("\r\n"))
    }
    pieces.push(encoder.encode(`--${boundary}--\r\n`))
    this.#pieces = pieces
    this.length = pieces.reduce((sum, piece) => sum + sizeOf(piece), 0)
  }

  /** The encoded body in chunks; `onSent` is called with the running total after each chunk is taken. */
  async *stream(onSent?: (sent: number, total: number) => void): AsyncGenerator<Uint8Array> {
    let sent = 0
    onSent?.(0, this.length)
    for (const piece of this.#pieces) {
      for await (const chunk of chunksOf(piece)) {
        yield chunk
        sent += chunk.byteLength
        onSent?.(sent, this.length)
      }
    }
  }
}

/** Anything shaped like a `FormData` (the global one, undici's, a polyfill's). */
export interface FormDataLike {
  entries(): IterableIterator<[string, unknown]>
}

/**
 * Encodes a `FormData` as the SDK's own body (strings as text parts, `Blob`s and `File`s as file
 * parts), so every form is sent the same way: streamed, with an exact length and progress.
 */
export const fromFormData = (form: FormDataLike): MultipartBody =>
  new MultipartBody(
    [...form.entries()].map(([name, value]): Part => {
      if (typeof value === "string") return { name, value }
      if (!(value instanceof Blob)) throw new TypeError(`svc: form entry \`${name}\` is neither a string nor a Blob.`)
      const fileName = typeof File === "function" && value instanceof File && value.name !== "" ? value.name : "blob"
      return { name, fileName, contentType: value.type || "application/octet-stream", data: value }
    })
  )

const fieldValue = (name: string, value: unknown): string => {
  if (typeof value === "string") return value
  if (typeof value === "number" || typeof value === "boolean" || value === null) return String(value)
  throw new TypeError(`svc: form field \`${name}\` must be a string, number, boolean or null.`)
}

/**
 * Encodes an upload's fields as a form: `fileKey` as the file part (named by `fileName`, a `File`'s
 * name or `upload`), every other defined field as a text part before it.
 */
export const multipartForm = (upload: object, fileKey: string): MultipartBody => {
  const { fileName, contentType, ...fields } = upload as Record<string, unknown>
  const data = fields[fileKey]
  if (!(data instanceof Uint8Array) && !(data instanceof Blob)) {
    throw new TypeError(`svc: \`${fileKey}\` must be a Uint8Array or a Blob.`)
  }
  const parts: Array<Part> = Object.entries(fields)
    .filter(([name, value]) => name !== fileKey && value !== undefined)
    .map(([name, value]) => ({ name, value: fieldValue(name, value) }))
  const ownName = typeof File === "function" && data instanceof File && data.name !== "" ? data.name : undefined
  const ownType = data instanceof Blob && data.type !== "" ? data.type : undefined
  parts.push({
    name: fileKey,
    fileName: typeof fileName === "string" && fileName !== "" ? fileName : (ownName ?? "upload"),
    contentType: typeof contentType === "string" && contentType !== "" ? contentType : (ownType ?? "application/octet-stream"),
    data
  })
  return new MultipartBody(parts)
}
