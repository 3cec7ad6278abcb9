/**
 * The suite's HTTP client: an undici Pool on one origin that answers every request with its
 * status, headers and text (JSON parsed when it is JSON), or with the transport error when the
 * connection dropped.
 */
import { Pool } from "undici"

/** What to send; `path` is the full path (`/api/v1/...`). */
export interface SoakRequest {
  readonly method: string
  readonly path: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** A string or bytes is sent as it is; anything else as JSON. */
  readonly body?: unknown
}

/** A response, or the connection's failure. */
export type SoakAnswer =
  | {
      readonly ok: true
      readonly status: number
      readonly headers: Readonly<Record<string, string>>
      readonly text: string
      /** The parsed body when it was JSON, else undefined. */
      readonly json: any
    }
  | { readonly ok: false; readonly error: string }

/** A pool of `connections` keep-alive connections to `origin`. */
export class SoakClient {
  private readonly pool: Pool
  constructor(
    readonly origin: string,
    connections: number
  ) {
    this.pool = new Pool(origin, { connections, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 })
  }

  /** Sends one request; never throws. */
  async send(request: SoakRequest): Promise<SoakAnswer> {
    const headers: Record<string, string> = { ...request.headers }
    let body: string | Uint8Array | undefined
    if (typeof request.body === "string" || request.body instanceof Uint8Array) body = request.body
    else if (request.body !== undefined) {
      body = JSON.stringify(request.body)
      if (!Object.keys(headers).some((name) => name.toLowerCase() === "content-type")) headers["content-type"] = "application/json"
    }
    try {
      const response = await this.pool.request({ origin: this.origin, method: request.method, path: request.path, headers, body: body ?? null })
      const text = await response.body.text()
      const flat: Record<string, string> = {}
      for (const [name, value] of Object.entries(response.headers)) flat[name] = Array.isArray(value) ? value.join(", ") : String(value ?? "")
      let json: any
      if ((flat["content-type"] ?? "").includes("json")) {
        try {
          json = JSON.parse(text)
        } catch {
          json = undefined
        }
      }
      return { ok: true, status: response.statusCode, headers: flat, text, json }
    } catch (error) {
      return { ok: false, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }
    }
  }

  /** Sends with a bearer key; throws unless the status is `expected` (set-up steps). */
  async must(key: string, method: string, path: string, body: unknown, expected: ReadonlyArray<number> = [200, 201, 202]): Promise<any> {
    const answer = await this.send({ method, path: `/api/v1${path}`, headers: { authorization: `Bearer ${key}` }, body })
    if (!answer.ok) throw new Error(`${method} ${path}: ${answer.error}`)
    if (!expected.includes(answer.status)) throw new Error(`${method} ${path}: ${answer.status} ${answer.text.slice(0, 400)}`)
    return answer.json
  }

  close(): Promise<void> {
    return this.pool.close()
  }
}

/** Whether an answer carries the `{error:{code,message}}` envelope. */
export const hasErrorEnvelope = (json: any): boolean =>
  json !== null &&
  typeof json === "object" &&
  typeof json.error === "object" &&
  json.error !== null &&
  typeof json.error.code === "string" &&
  typeof json.error.message === "string"
