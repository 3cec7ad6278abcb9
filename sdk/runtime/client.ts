/**
 * The client core: builds requests from generated operation descriptions, sends them over a keep-alive
 * undici `Agent`, retries what is safe to retry, and turns error responses into `SvcError`s.
 */
import { randomUUID } from "node:crypto"
import { Agent, type Dispatcher, type FormData } from "undici"
import { type ErrorClassMap, SvcConnectionError, SvcError, errorFromResponse } from "./errors.js"
import { type RequestOptions, type ResolvedOptions, type SvcOptions, resolveOptions } from "./options.js"
import { type CursorPage, PagePromise } from "./pagination.js"
import { canRepeatAfterConnectionError, isRetryableStatus, parseRetryAfter, retryDelayMs, sleep } from "./retry.js"
import { type RawResponse, send } from "./transport.js"
import { sdkVersion } from "./version.js"

/** One call of an operation, as generated resource methods describe it. */
export interface ApiCall {
  readonly method: Dispatcher.HttpMethod
  /** Path under `baseUrl`, with `{name}` placeholders. */
  readonly path: string
  readonly pathParams?: Readonly<Record<string, string | number>> | undefined
  readonly query?: object | undefined
  readonly body?: unknown
  /** `json` (default when a body is given) or `multipart` (`body` is a `FormData`). */
  readonly bodyType?: "json" | "multipart" | undefined
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
    const url = new URL(`${this.#options.baseUrl}${expandPath(call.path, call.pathParams)}`)
    appendQuery(url, call.query)
    const headers: Record<string, string> = {
      accept: "application/json",
      "user-agent": `svc-sdk/${sdkVersion} node/${process.versions.node}`,
      ...this.#options.headers,
      ...options.headers,
      authorization: `Bearer ${this.#options.apiKey}`
    }
    const idempotencyKey = options.idempotencyKey ?? (call.idempotent ? randomUUID() : undefined)
    if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey
    let body: string | FormData | undefined
    if (call.body !== undefined) {
      if (call.bodyType === "multipart") body = call.body as FormData
      else {
        body = JSON.stringify(call.body)
        headers["content-type"] = "application/json"
      }
    }
    const maxRetries = options.maxRetries ?? this.#options.maxRetries
    const timeoutMs = options.timeoutMs ?? this.#options.timeoutMs
    const attempt = { url: url.href, method: call.method, headers, body, dispatcher: this.#dispatcher, timeoutMs }
    for (let retry = 0; ; retry++) {
      let response: RawResponse
      try {
        response = await send({ ...attempt, signal: options.signal })
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
