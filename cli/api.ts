/**
 * Commands that act through the External API: the `--base-url` and `--api-key` options, a client of
 * the SDK (imported on first use, so help stays fast), and API failures turned into one-line CLI errors.
 */
import type { Command } from "commander"
import type { Svc } from "../sdk/index.js"
import { CliError, describe, failure, toCliError, usage } from "./errors.js"
import type { CliIo } from "./io.js"
import type { CommonOptions } from "./options.js"

/** The address `svc serve` listens on by default. */
export const defaultBaseUrl = "http://127.0.0.1:8787/api/v1"

/** Options of commands that call the API. */
export interface ApiOptions extends CommonOptions {
  readonly baseUrl?: string | undefined
  readonly apiKey?: string | undefined
}

/** Adds `--base-url`, `--api-key` and `--json` (described by `json`) to a command. */
export const withApi = (command: Command, json = "print one machine-readable JSON document on stdout"): Command =>
  command
    .option("--base-url <url>", `the API's {base_url} (default: $SVC_BASE_URL or ${defaultBaseUrl})`)
    .option("--api-key <key>", "an organization or personal API key (default: $SVC_API_KEY)")
    .option("--json", json)

/** The base URL and key a command uses: options first, then `SVC_BASE_URL` / `SVC_API_KEY`. */
export const resolveApi = (io: CliIo, options: ApiOptions): { readonly baseUrl: string; readonly apiKey: string } => {
  const apiKey = options.apiKey ?? (io.env.SVC_API_KEY || undefined)
  if (apiKey === undefined || apiKey.trim() === "") throw usage("no API key: pass --api-key or set SVC_API_KEY.")
  const baseUrl = (options.baseUrl ?? (io.env.SVC_BASE_URL || undefined) ?? defaultBaseUrl).replace(/\/+$/, "")
  let parsed: URL
  try {
    parsed = new URL(baseUrl)
  } catch {
    throw usage(`--base-url '${baseUrl}' is not a URL (like ${defaultBaseUrl}).`)
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw usage(`--base-url '${baseUrl}' is not an http(s) URL.`)
  return { baseUrl, apiKey }
}

/** Whether `error` is an error of the SDK (`SvcError` or a subclass): `status`, `code`, `requestId`. */
const isSvcError = (error: unknown): error is Error & { status: number; code: string; requestId: string | undefined } =>
  error instanceof Error &&
  typeof (error as { code?: unknown }).code === "string" &&
  typeof (error as { status?: unknown }).status === "number"

/**
 * An API failure as a CLI error: the line `<code>: <message> (request <id>)` for an answer (the
 * envelope keeps the API's code and the message), the SDK's own message when the server could not be reached.
 */
export const apiFailure = (error: unknown): CliError => {
  if (!isSvcError(error)) return toCliError(error)
  if (error.status === 0) return failure(describe(error), error.code)
  const message = `${describe(error)}${error.requestId ? ` (request ${error.requestId})` : ""}`
  return new CliError(message, 1, error.code, `${error.code}: ${message}`)
}

/**
 * Runs `use` with a client of the SDK; closes it afterwards. API refusals and unreachable servers become
 * exit 1 with one line; CLI errors thrown by `use` pass through.
 */
export const withClient = async <A>(io: CliIo, options: ApiOptions, use: (client: Svc) => Promise<A>): Promise<A> => {
  const settings = resolveApi(io, options)
  const { Svc } = await import("../sdk/index.js")
  const client = new Svc(settings)
  try {
    return await use(client)
  } catch (error) {
    if (isSvcError(error)) throw apiFailure(error)
    throw error
  } finally {
    await client.close()
  }
}
