/**
 * The record of one answer the test harness received (test/support/response-recorder.ts writes
 * them, one JSON line each, to `responses-*.jsonl` files; response-sweep.ts reads them).
 */
export interface RecordedResponse {
  readonly method: string
  /** The path as sent, from the server's origin: `/api/v1/agents/123`. */
  readonly path: string
  /** The query string, with its `?`, or empty. */
  readonly query: string
  readonly status: number
  readonly contentType: string
  /** The body's text; left out (and `bodyOmitted` set) past `maxRecordedBody` characters. */
  readonly body?: string
  readonly bodyOmitted?: true
}

/** Bodies longer than this are not recorded. */
export const maxRecordedBody = 1_000_000

/** Whether a file of a recording directory holds recorded answers. */
export const isRecordingFile = (name: string): boolean => /^responses-.*\.jsonl$/.test(name)
