/**
 * The client core: builds requests from generated operation descriptions, sends them over a keep-alive
 * undici `Agent`, retries what is safe to retry, and turns error responses into `SvcError`s.
 */
import { randomUUID } from "node:crypto"
import { Readable } from "node:stream"
import { Agent, type Dispatcher } from "undici"
import { type ErrorClassMap, SvcConnectionError, SvcError, errorFromResponse } from "./errors.js"
import { type FormDataLike, fromFormData, maxRequestBytes, MultipartBody, type UploadProgress } from "./multipart.js"
import { type RequestOptions, type ResolvedOptions, type SvcOptions, resolveOptions } from "./options.js"
import { type CursorPage, PagePromise } from "./pagination.js"
import { canRepeatAfterConnectionError, isRetryableStatus, parseRetryAfter, retryDelayMs, sleep } from "./retry.js"
import { type OpenedStream, ReplyStream } from "./stream.js"
import { openStream, type RawResponse, readAll, send } from "./transport.js"
import { sdkVersion } from "./version.js"

/** One call of an operation, as generated resource methods describe it. */
export interface ApiCall {
  readonly method: Dispatcher.HttpMethod
  /** Path under `baseUrl`, with `{name}` placeholders. */
  readonly path: string
  readonly pathParams?: Readonly<Record<string, string | number>> | undefined
  readonly query?: object | undefined
  readonly body?: unknown
  /**
   * `json` (default when a body is given), `multipart` (`body` is a `FormData` or a `MultipartBody`), or
   * `auto` for operations that take either: a `FormData` or `MultipartBody` goes as multipart, anything else as JSON.
   * A `FormData` is encoded by the SDK (streamed with an exact length), like an upload.
   */
  readonly bodyType?: "json" | "multipart" | "auto" | undefined
  /** For a `MultipartBody`: called as its bytes are sent (see `UploadOptions.onProgress`). */
  readonly onProgress?: ((progress: UploadProgress) => void) | undefined
  /** The operation declares an `Idempotency-Key` header: one is sent, the same on every retry. */
  readonly idempotent?: boolean | undefined
  /** `json` (default), `binary` (a `Uint8Array`) or `none` (`undefined`). */
  readonly responseType?: "json" | "binary" | "none" | undefined
  readonly options?: RequestOptions | undefined
}

const appendQuery = (url: URL, query: object | undefined): void => {
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(item))
  }
}

const expandPath = (path: string, params: Readonly<Record<string, string | number>> = {}): string =>
  path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name]
    if (value === undefined || value === "") throw new TypeError(`svc: path parameter \`${name}\` is required.`)
    return encodeURIComponent(String(value))
  })

/** Whether `value` is a `FormData` (the global one or undici's). */
const isFormData = (value: unknown): value is FormDataLike =>
  typeof value === "object" && value !== null && (value as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag] === "FormData"

const decodeBody = (response: RawResponse, type: ApiCall["responseType"]): unknown => {
  if (type === "binary") return response.body
  if (type === "none" || response.body.length === 0) return undefined
  const text = new TextDecoder().decode(response.body)
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The transport and retry machinery shared by every resource. */
export class ApiClient {
  readonly #options: ResolvedOptions
  readonly #errorClasses: ErrorClassMap
  readonly #dispatcher: Dispatcher
  readonly #ownsDispatcher: boolean

  /** Options omitted here come from `SVC_BASE_URL` / `SVC_API_KEY`; `errorClasses` maps codes to error classes. */
  constructor(options: SvcOptions = {}, errorClasses: ErrorClassMap = {}) {
    this.#options = resolveOptions(options)
    this.#errorClasses = errorClasses
    this.#ownsDispatcher = this.#options.dispatcher === undefined
    this.#dispatcher = this.#options.dispatcher ?? new Agent({ keepAliveTimeout: 10_000, headersTimeout: 0, bodyTimeout: 0 })
  }

  /** The `{base_url}` requests go to. */
  get baseUrl(): string {
    return this.#options.baseUrl
  }

  /** Sends a call, retrying where safe; resolves with the decoded 2xx body or rejects with an `SvcError`. */
  async request<T>(call: ApiCall): Promise<T> {
    const options = call.options ?? {}
    const url = this.#url(call)
    const headers = this.#headers(call, "application/json")
    const idempotencyKey = options.idempotencyKey ?? (call.idempotent ? randomUUID() : undefined)
    if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey
    let body: string | MultipartBody | undefined
    const multipart = call.bodyType === "multipart" || (call.bodyType === "auto" && (call.body instanceof MultipartBody || isFormData(call.body)))
    if (call.body !== undefined && multipart) {
      if (call.body instanceof MultipartBody) body = call.body
      else if (isFormData(call.body)) body = fromFormData(call.body)
      else throw new TypeError("svc: a multipart body must be a FormData or a MultipartBody.")
      headers["content-type"] = body.contentType
      headers["content-length"] = String(body.length)
    } else if (call.body !== undefined) {
      body = JSON.stringify(call.body)
      headers["content-type"] = "application/json"
    }
    const length = body instanceof MultipartBody ? body.length : typeof body === "string" ? Buffer.byteLength(body) : 0
    if (length > maxRequestBytes) throw this.#tooLarge(length)
    /** The body of attempt `number`: a multipart upload is streamed afresh each time. */
    const bodyOf = (number: number) => {
      if (!(body instanceof MultipartBody)) return body
      const onProgress = call.onProgress
      return Readable.from(body.stream(onProgress && ((sent, total) => onProgress({ sent, total, attempt: number }))), {
        objectMode: false
      })
    }
    const maxRetries = options.maxRetries ?? this.#options.maxRetries
    const timeoutMs = options.timeoutMs ?? this.#options.timeoutMs
    const attempt = { url: url.href, method: call.method, headers, dispatcher: this.#dispatcher, timeoutMs }
    for (let retry = 0; ; retry++) {
      let response: RawResponse
      try {
        response = await send({ ...attempt, body: bodyOf(retry + 1), signal: options.signal })
      } catch (error) {
        const repeatable = canRepeatAfterConnectionError(call.method, idempotencyKey !== undefined)
        if (!(error instanceof SvcConnectionError) || !repeatable || retry >= maxRetries) throw error
        await sleep(retryDelayMs(retry + 1, undefined), options.signal)
        continue
      }
      if (response.status >= 200 && response.status < 300) return decodeBody(response, call.responseType) as T
      if (!isRetryableStatus(response.status) || retry >= maxRetries) {
        throw errorFromResponse(this.#errorClasses, response.status, response.headers, decodeBody(response, "json"))
      }
      const retryAfter = response.status === 429 ? parseRetryAfter(response.headers["retry-after"]) : undefined
      await sleep(retryDelayMs(retry + 1, retryAfter), options.signal)
    }
  }

  /**
   * Sends a call whose answer is `text/event-stream` (its JSON body gets `stream: true`) when the
   * returned stream is first iterated; never sent again (the run may have started): a connection
   * that breaks mid-stream is resumed through `GET /executions/{id}/events` with `Last-Event-ID`.
   * `timeoutMs` limits the wait for the response's headers, not the stream; `options.signal`
   * aborts it at any point, and aborting (or leaving the loop early) cancels the run it started.
   */
  stream<Done>(call: ApiCall): ReplyStream<Done> {
    const open = async (): Promise<OpenedStream> => {
      const options = call.options ?? {}
      const headers = this.#headers(call, "text/event-stream")
      headers["content-type"] = "application/json"
      const body = JSON.stringify({ ...(call.body as object | undefined), stream: true })
      if (Buffer.byteLength(body) > maxRequestBytes) throw this.#tooLarge(Buffer.byteLength(body))
      return this.#openedStream(call, { url: this.#url(call).href, method: call.method, headers, body, signal: options.signal })
    }
    const cancel = async (executionId: string): Promise<void> => {
      const headers = call.options?.headers
      await this.request({ method: "POST", path: "/executions/{id}/cancel", pathParams: { id: executionId }, options: headers === undefined ? {} : { headers } })
    }
    return new ReplyStream<Done>(open, this.#errorClasses, { resume: this.#resume(call), cancel, signal: call.options?.signal })
  }

  /**
   * A call answering a run's events (`GET /executions/{id}/events`, the execution in
   * `pathParams.id`): read as a `ReplyStream` that resumes by itself when its connection breaks.
   * Leaving it never stops the run. `options.headers["last-event-id"]` (or the query's `after`)
   * starts after that event.
   */
  events<Done>(call: ApiCall): ReplyStream<Done> {
    const open = async (): Promise<OpenedStream> =>
      this.#openedStream(call, { url: this.#url(call).href, method: call.method, headers: this.#headers(call, "text/event-stream"), signal: call.options?.signal })
    const executionId = String(call.pathParams?.id ?? "")
    const given = call.options?.headers?.["last-event-id"] ?? (call.query as { after?: unknown } | undefined)?.after
    const lastEventId = given !== undefined && /^[0-9]+$/.test(String(given)) ? Number(given) : 0
    return new ReplyStream<Done>(open, this.#errorClasses, { resume: this.#resume(call), executionId, lastEventId, signal: call.options?.signal })
  }

  /** Opens the events of an execution after the event `lastEventId` (0: from the start), with `call`'s headers and signal. */
  #resume(call: ApiCall): (executionId: string, lastEventId: number) => Promise<OpenedStream> {
    return (executionId, lastEventId) => {
      const headers = this.#headers(call, "text/event-stream")
      delete headers["last-event-id"]
      if (lastEventId > 0) headers["last-event-id"] = String(lastEventId)
      const url = `${this.#options.baseUrl}${expandPath("/executions/{id}/events", { id: executionId })}`
      return this.#openedStream(call, { url, method: "GET", headers, signal: call.options?.signal })
    }
  }

  /** Opens a stream: its response once the headers arrived, or the typed error of a refusal. */
  async #openedStream(
    call: ApiCall,
    request: { readonly url: string; readonly method: Dispatcher.HttpMethod; readonly headers: Record<string, string>; readonly body?: string | undefined; readonly signal: AbortSignal | undefined }
  ): Promise<OpenedStream> {
    const opened = await openStream({
      url: request.url,
      method: request.method,
      headers: request.headers,
      body: request.body,
      dispatcher: this.#dispatcher,
      timeoutMs: call.options?.timeoutMs ?? this.#options.timeoutMs,
      signal: request.signal
    })
    if (opened.status >= 200 && opened.status < 300) return opened
    const bytes = await readAll(opened.body)
    throw errorFromResponse(this.#errorClasses, opened.status, opened.headers, decodeBody({ ...opened, body: bytes }, "json"))
  }

  #url(call: ApiCall): URL {
    const url = new URL(`${this.#options.baseUrl}${expandPath(call.path, call.pathParams)}`)
    appendQuery(url, call.query)
    return url
  }

  #headers(call: ApiCall, accept: string): Record<string, string> {
    return {
      accept,
      "user-agent": `svc-sdk/${sdkVersion} node/${process.versions.node}`,
      ...this.#options.headers,
      ...call.options?.headers,
      authorization: `Bearer ${this.#options.apiKey}`
    }
  }

  /** The `payload_too_large` error of a body over the API's limit, raised before anything is sent (no request id). */
  #tooLarge(length: number): SvcError {
    const ErrorClass = Object.hasOwn(this.#errorClasses, "payload_too_large") ? (this.#errorClasses.payload_too_large ?? SvcError) : SvcError
    const mb = (bytes: number) => `${(bytes / 1_000_000).toFixed(1)} MB`
    return new ErrorClass({
      status: 413,
      code: "payload_too_large",
      message: `The request body is ${mb(length)}, over the API's ${mb(maxRequestBytes)} limit; nothing was sent.`
    })
  }

  /** Sends a list call lazily as a `PagePromise` that follows `nextCursor` through `itemsKey`. */
  list<Item, Page extends CursorPage>(call: ApiCall, itemsKey: string): PagePromise<Item, Page> {
    const query: Record<string, unknown> = { ...call.query }
    const startCursor = typeof query.cursor === "string" ? query.cursor : undefined
    const fetchPage = (cursor: string | undefined) =>
      this.request<Page>({ ...call, query: { ...query, cursor } })
    const itemsOf = (page: Page): ReadonlyArray<Item> => {
      const items: unknown = (page as unknown as Record<string, unknown>)[itemsKey]
      if (Array.isArray(items)) return items as ReadonlyArray<Item>
      throw new SvcError({ status: 200, code: "unexpected_response", message: `The list has no \`${itemsKey}\` array.` })
    }
    return new PagePromise(fetchPage, itemsOf, startCursor)
  }

  /** Closes the client's keep-alive connections (a dispatcher passed in options is left open). */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close()
  }
}
