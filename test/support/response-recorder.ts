/**
 * An opt-in recorder of the answers the test harness receives: with `SVC_RECORD_RESPONSES=<dir>`,
 * every request sent through `TestServer.request` (test/support/server.ts) appends one JSON line
 * (method, path, query, status, content type, body) to `<dir>/responses-<pid>-<thread>.jsonl`.
 * `npm run conformance` validates every recorded answer against the served OpenAPI document
 * (scripts/conformance/response-sweep.ts). Without the variable it does nothing.
 */
import { appendFileSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { threadId } from "node:worker_threads"
import { maxRecordedBody, type RecordedResponse } from "../../scripts/conformance/recorded-response.js"

/** The directory answers are recorded to, or undefined when recording is off. */
export const recordingDirectory = (): string | undefined => process.env.SVC_RECORD_RESPONSES || undefined

/** Appends one answer to this process's (and thread's) file when recording is on. */
export const recordResponse = (url: URL, method: string, status: number, headers: Headers, text: string): void => {
  const dir = recordingDirectory()
  if (dir === undefined) return
  const entry: RecordedResponse = {
    method: method.toUpperCase(),
    path: url.pathname,
    query: url.search,
    status,
    contentType: headers.get("content-type") ?? "",
    ...(text.length > maxRecordedBody ? { bodyOmitted: true as const } : { body: text })
  }
  mkdirSync(dir, { recursive: true })
  appendFileSync(join(dir, `responses-${process.pid}-${threadId}.jsonl`), `${JSON.stringify(entry)}\n`)
}
