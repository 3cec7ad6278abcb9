/**
 * The `fetch` the `openai` client uses for model calls: `undici.request` on a keep-alive agent,
 * answered as a web `Response`. Node's global `fetch` costs about twice the CPU per streamed call
 * (request cloning, web streams on both sides; see docs/performance.md). A JSON answer (a whole
 * completion, an error) is read first and handed on as text, since Node's `Response` builds a web
 * stream for any body it is given and the client would only read it straight back; anything else
 * (server-sent events) is handed on as a web stream. Redirects are not followed (model endpoints
 * answer directly) and no compression is asked for.
 */
import { Readable } from "node:stream"
import OpenAI from "openai"
import { Agent, request } from "undici"

/** Statuses a `Response` may not carry a body with. */
const bodiless = new Set([101, 204, 205, 304])

/** A `Response` whose body was already read: its body methods answer from that text. */
class ReadResponse extends Response {
  readonly #text: string
  override text = (): Promise<string> => Promise.resolve(this.#text)
  override json = (): Promise<any> => Promise.resolve(this.#text).then((text) => JSON.parse(text))
  override arrayBuffer = (): Promise<ArrayBuffer> => Promise.resolve(new TextEncoder().encode(this.#text).buffer as ArrayBuffer)

  constructor(text: string, init: ResponseInit) {
    super(null, init)
    this.#text = text
  }
}

/** Whether a `Content-Type` is JSON (`application/json`, `…+json`), which the client reads whole. */
const isJson = (contentType: string | Array<string> | undefined) => {
  const essence = (Array.isArray(contentType) ? contentType[0] : contentType)?.split(";")[0]?.trim().toLowerCase()
  return essence !== undefined && (essence === "application/json" || essence.endsWith("+json"))
}

/** A `fetch` over one keep-alive agent. */
export const makeModelFetch = (): typeof fetch => {
  const dispatcher = new Agent({ keepAliveTimeout: 10_000 })
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = typeof input === "string" || input instanceof URL ? input : input.url
    const headers = Object.fromEntries(init.headers instanceof Headers ? init.headers : new Headers(init.headers))
    const answer = await request(url, {
      method: (init.method ?? "GET") as "GET",
      headers,
      body: typeof init.body === "string" ? init.body : init.body == null ? null : Buffer.from(await new Response(init.body).arrayBuffer()),
      signal: init.signal ?? undefined,
      dispatcher
    })
    const responseHeaders = new Headers()
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue
      for (const one of Array.isArray(value) ? value : [value]) responseHeaders.append(name, one)
    }
    if (bodiless.has(answer.statusCode)) {
      answer.body.resume()
      return new Response(null, { status: answer.statusCode, headers: responseHeaders })
    }
    if (isJson(answer.headers["content-type"])) {
      return new ReadResponse(await answer.body.text(), { status: answer.statusCode, headers: responseHeaders })
    }
    return new Response(Readable.toWeb(answer.body) as ReadableStream, { status: answer.statusCode, headers: responseHeaders })
  }) as typeof fetch
}

/**
 * An `openai` client for an OpenAI-compatible endpoint as svc calls them all: over
 * {@link makeModelFetch}, its own retries and logging off (callers retry by their own policy), no
 * `Authorization` header at all without a key.
 */
export const makeOpenAiClient = (options: { readonly baseUrl: string; readonly apiKey: string | undefined; readonly timeoutMs?: number }): OpenAI =>
  new OpenAI({
    baseURL: options.baseUrl,
    apiKey: options.apiKey ?? "",
    organization: null,
    project: null,
    webhookSecret: null,
    maxRetries: 0,
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
    logLevel: "off",
    fetch: makeModelFetch(),
    ...(options.apiKey === undefined ? { defaultHeaders: { Authorization: null } } : {})
  })
