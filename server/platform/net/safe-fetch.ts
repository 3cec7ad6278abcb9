/**
 * GET a caller-supplied URL without letting the caller reach the service's own network (SSRF):
 * `url` sources now, webhooks later. Every refusal happens before a connection is opened.
 *
 * How each hop is checked
 * 1. `checkUrl` (address-policy.ts): http(s) only, no credentials, an IP-literal host must be public.
 * 2. The connection is made by an undici `Agent` private to this call whose connector resolves the
 *    host name ONCE, through `options.lookup`, and hands the resolved addresses straight to the
 *    socket (`net.connect({ lookup })`), so the address that was checked is the address connected
 *    to: there is no second resolution a rebinding DNS server could answer differently. EVERY
 *    resolved address is checked and the hop is refused if ANY of them is blocked (rather than
 *    quietly using the good ones: a name that mixes public and private answers is hostile or
 *    misconfigured either way). Node skips `lookup` for IP-literal hosts, so the connector also
 *    checks IP literals itself before connecting (belt and braces with step 1).
 * 3. Redirects are never followed by undici: each 301/302/303/307/308 `Location` becomes a new hop
 *    (same checks, a new resolution when it needs a new connection), at most `maxRedirects` of them.
 *    Always GET, whatever the redirect status.
 *
 * Limits: one overall deadline (`AbortSignal.timeout(timeoutMs)`) covers resolution, connection,
 * every hop's headers and the body; the body is counted while it streams and the download is
 * abandoned as soon as it passes `maxBytes` (a Content-Length above the limit is refused before
 * reading, but a missing or small one is not trusted). `Accept-Encoding: identity` is sent, so the
 * bytes counted are the bytes returned (no decompression bombs).
 *
 * With `allowPrivate` (`svc serve --allow-private-urls`) the address checks are skipped; scheme and
 * credential checks, redirects, size and time limits still apply.
 */
import type { LookupAddress, LookupOptions } from "node:dns"
import { lookup as dnsLookup } from "node:dns/promises"
import { isIP, type LookupFunction } from "node:net"
import { Effect, Schema } from "effect"
import type { buildConnector } from "undici"
import { checkUrl, describeAddress, isPublicAddress } from "./address-policy.js"

/** Largest body fetched by default: 10 MB. */
export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024
/** Overall deadline by default (resolution, connection, redirects, headers and body): 15 s. */
export const DEFAULT_TIMEOUT_MS = 15_000
/** Redirects followed by default. */
export const DEFAULT_MAX_REDIRECTS = 5
/** The User-Agent sent unless another is given. */
export const DEFAULT_USER_AGENT = "svc-fetch/0.1 (url sources)"

/** One resolved address, as `dns.lookup(name, { all: true })` answers. */
export interface ResolvedAddress {
  readonly address: string
  readonly family: number
}

/** Resolves a host name to every address it has. */
export type HostLookup = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

export interface SafeFetchOptions {
  /** Skip the address checks (loopback and private networks reachable). */
  readonly allowPrivate: boolean
  /** Refuse bodies larger than this many bytes. */
  readonly maxBytes: number
  /** Overall deadline in milliseconds. */
  readonly timeoutMs: number
  /** Redirects followed before giving up; default `DEFAULT_MAX_REDIRECTS`. */
  readonly maxRedirects?: number
  readonly userAgent?: string
  /** Host name resolution; default `dns.lookup(name, { all: true })`. Called at most once per hop. */
  readonly lookup?: HostLookup
  /** Whether an address may be reached; default `isPublicAddress`. Ignored with `allowPrivate`. */
  readonly classify?: (ip: string) => boolean
  /** Cancels the fetch (reported as `cancelled`). */
  readonly signal?: AbortSignal
  /** Lets `localhost` names through the URL check (with a `classify` that admits loopback). */
  readonly loopbackNames?: boolean
  /** Sends this instead of a GET (webhooks): the method, extra headers and the body. */
  readonly send?: { readonly method: "POST"; readonly headers: Readonly<Record<string, string>>; readonly body: string }
  /** Certificate authorities (PEM) trusted for https instead of the system's; tests give their own. */
  readonly ca?: string | undefined
}

export interface SafeFetchResult {
  /** The URL the body came from, after redirects. */
  readonly finalUrl: string
  readonly status: number
  /** The Content-Type header as sent, or null. */
  readonly contentType: string | null
  /** The Cache-Control header as sent, or null. */
  readonly cacheControl: string | null
  readonly bytes: Uint8Array
  /** Redirects followed. */
  readonly redirects: number
}

export const FetchRefusalReason = Schema.Literal(
  "invalid_url",
  "bad_scheme",
  "credentials",
  "blocked_address",
  "too_many_redirects",
  "too_large",
  "timeout",
  "http_status",
  "connection_error",
  "cancelled"
)
export type FetchRefusalReason = typeof FetchRefusalReason.Type

/** Why a URL was not fetched; `message` is meant for people (it ends up in a source's errorMessage). */
export class FetchRefused extends Schema.TaggedError<FetchRefused>()("FetchRefused", {
  reason: FetchRefusalReason,
  message: Schema.String,
  /** The URL of the hop that failed. */
  url: Schema.String,
  /** The response status, for `http_status`. */
  status: Schema.optional(Schema.Number),
  /** The refused address, for `blocked_address`. */
  address: Schema.optional(Schema.String)
}) {}

/** Raised inside the connector when an address is refused; becomes a `blocked_address` refusal. */
class BlockedAddress extends Error {
  readonly code = "ERR_SVC_BLOCKED_ADDRESS"
  constructor(
    readonly host: string,
    readonly address: string
  ) {
    const range = describeAddress(address).range
    super(
      host === address
        ? `${address} is not a public address (${range}); only public addresses are fetched.`
        : `${host} resolves to ${address}, which is not a public address (${range}); only public addresses are fetched.`
    )
  }
}

const defaultLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true })

const unbracket = (host: string) => (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host)

const familyNumber = (family: LookupOptions["family"]): 0 | 4 | 6 =>
  family === 4 || family === "IPv4" ? 4 : family === 6 || family === "IPv6" ? 6 : 0

/** Drops a response body we will not read (undici reports destroying an unread body as an error). */
const discard = (body: { on(event: "error", listener: () => void): unknown; destroy(): unknown }) => {
  body.on("error", () => undefined)
  body.destroy()
}

const redirectStatuses = new Set([301, 302, 303, 307, 308])

const headerValue = (value: string | Array<string> | undefined): string | null =>
  value === undefined ? null : Array.isArray(value) ? (value[0] ?? null) : value

const describeBytes = (n: number) =>
  n >= 1024 * 1024 ? `${+(n / (1024 * 1024)).toFixed(1)} MB` : n >= 1024 ? `${+(n / 1024).toFixed(1)} KB` : `${n} bytes`

const errorText = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e)
  const code = (e as { code?: unknown }).code
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME") return "the host name could not be resolved"
  if (code === "ECONNREFUSED") return "the connection was refused"
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET") return "the connection was closed unexpectedly"
  const cause = (e as { cause?: unknown }).cause
  return cause instanceof Error && cause.message !== "" ? `${e.message} (${cause.message})` : e.message
}

/**
 * Fetches `url` with GET (or sends `options.send`) under the policy above. Resolves with the body, or rejects with
 * `FetchRefused` (and nothing else).
 */
export const safeFetch = async (url: string | URL, options: SafeFetchOptions): Promise<SafeFetchResult> => {
  // undici loads on the first fetch: the services that fetch are built by processes that never do (the CLI's administration).
  // It is CommonJS: Node's import answers its named exports and `default`, the CLI bundle's import only `default`
  // (module.exports, which holds them all), so they are read from `default` (without it every fetch of the
  // bundled `svc`, webhooks and url sources, failed with "… is not a function").
  const loaded = await import("undici")
  const { Agent, buildConnector, request } = loaded.default ?? loaded
  const { allowPrivate, maxBytes, timeoutMs } = options
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS
  const classify = options.classify ?? isPublicAddress
  const resolve = options.lookup ?? defaultLookup
  const deadline = AbortSignal.timeout(timeoutMs)
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline

  /** The refusal raised by the connector on the current hop (errors may come back wrapped). */
  let blocked: BlockedAddress | undefined

  const checkedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    const fail = (err: NodeJS.ErrnoException) => callback(err, "", undefined)
    resolve(hostname).then(
      (resolved) => {
        if (!allowPrivate) {
          const bad = resolved.find((a) => !classify(a.address))
          if (bad !== undefined) {
            blocked = new BlockedAddress(hostname, bad.address)
            return fail(blocked)
          }
        }
        const family = familyNumber(lookupOptions.family)
        const usable = resolved.filter((a) => family === 0 || a.family === family)
        const first = usable[0]
        if (first === undefined) {
          return fail(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }))
        }
        if (lookupOptions.all) {
          callback(null, usable.map((a): LookupAddress => ({ address: a.address, family: a.family })))
        } else {
          callback(null, first.address, first.family)
        }
      },
      (err: unknown) => fail(err instanceof Error ? err : new Error(String(err)))
    )
  }

  const baseConnect = buildConnector({ lookup: checkedLookup, timeout: timeoutMs, ...(options.ca === undefined ? {} : { ca: options.ca }) })
  const connect: buildConnector.connector = (connectOptions, callback) => {
    const host = unbracket(connectOptions.hostname)
    if (!allowPrivate && isIP(host) !== 0 && !classify(host)) {
      blocked = new BlockedAddress(host, host)
      callback(blocked, null)
      return
    }
    baseConnect(connectOptions, callback)
  }
  const agent = new Agent({ connect })

  let current = typeof url === "string" ? url : url.href

  const refused = (
    reason: FetchRefusalReason,
    message: string,
    extra: { readonly status?: number; readonly address?: string } = {}
  ) => new FetchRefused({ reason, message, url: current, ...extra })

  /** Turns whatever undici or a stream threw into the refusal that explains it. */
  const translate = (e: unknown): FetchRefused => {
    if (e instanceof FetchRefused) return e
    if (blocked !== undefined) return refused("blocked_address", blocked.message, { address: blocked.address })
    if (deadline.aborted) return refused("timeout", `${current} did not answer in full within ${timeoutMs / 1000} s.`)
    if (options.signal?.aborted) return refused("cancelled", `Fetching ${current} was cancelled.`)
    return refused("connection_error", `Could not fetch ${current}: ${errorText(e)}.`)
  }

  try {
    for (let redirects = 0; ; redirects++) {
      blocked = undefined
      if (signal.aborted) throw translate(signal.reason)
      const check = checkUrl(current, allowPrivate, classify, options.loopbackNames ?? false)
      if (!check.ok) {
        throw refused(check.reason, check.message)
      }
      const target = check.url
      target.hash = ""
      current = target.href

      const response = await request(target, {
        dispatcher: agent,
        method: options.send?.method ?? "GET",
        headers: {
          "user-agent": options.userAgent ?? DEFAULT_USER_AGENT,
          accept: "*/*",
          "accept-encoding": "identity",
          ...options.send?.headers
        },
        ...(options.send === undefined ? {} : { body: options.send.body }),
        signal
      }).catch((e: unknown) => {
        throw translate(e)
      })
      const { statusCode, headers, body } = response

      if (redirectStatuses.has(statusCode)) {
        const location = headerValue(headers["location"])
        await body.dump({ limit: 64 * 1024 }).catch(() => undefined)
        if (location === null) {
          throw refused("http_status", `${current} answered ${statusCode} without a Location to follow.`, {
            status: statusCode
          })
        }
        if (redirects >= maxRedirects) {
          throw refused("too_many_redirects", `${current} redirected more than ${maxRedirects} times.`)
        }
        let next: URL
        try {
          next = new URL(location, target)
        } catch {
          throw refused("invalid_url", `${current} redirected to an invalid URL.`)
        }
        current = next.href
        continue
      }

      if (statusCode < 200 || statusCode > 299) {
        discard(body)
        throw refused("http_status", `${current} answered with HTTP status ${statusCode}.`, { status: statusCode })
      }

      const declared = Number(headerValue(headers["content-length"]) ?? Number.NaN)
      if (Number.isFinite(declared) && declared > maxBytes) {
        discard(body)
        throw refused(
          "too_large",
          `${current} is ${describeBytes(declared)}, over the ${describeBytes(maxBytes)} limit.`
        )
      }

      const chunks: Array<Uint8Array> = []
      let total = 0
      try {
        for await (const chunk of body) {
          const bytes = chunk as Uint8Array
          total += bytes.byteLength
          if (total > maxBytes) {
            discard(body)
            throw refused("too_large", `${current} sent more than the ${describeBytes(maxBytes)} limit.`)
          }
          chunks.push(bytes)
        }
      } catch (e) {
        throw translate(e)
      }
      const bytes = new Uint8Array(total)
      let offset = 0
      for (const chunk of chunks) {
        bytes.set(chunk, offset)
        offset += chunk.byteLength
      }
      return {
        finalUrl: current,
        status: statusCode,
        contentType: headerValue(headers["content-type"]),
        cacheControl: headerValue(headers["cache-control"]),
        bytes,
        redirects
      }
    }
  } finally {
    agent.destroy().catch(() => undefined)
  }
}

/** `safeFetch` as an Effect; interrupting it aborts the fetch. */
export const safeFetchEffect = (
  url: string | URL,
  options: Omit<SafeFetchOptions, "signal">
): Effect.Effect<SafeFetchResult, FetchRefused> =>
  Effect.tryPromise({
    try: (signal) => safeFetch(url, { ...options, signal }),
    catch: (e) =>
      e instanceof FetchRefused
        ? e
        : new FetchRefused({
            reason: "connection_error",
            message: `Could not fetch ${String(url)}: ${errorText(e)}.`,
            url: String(url)
          })
  })
