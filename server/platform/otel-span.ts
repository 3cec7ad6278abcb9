/** What the trace export (`otel.ts`, `otel-export.ts`) takes: an execution and its recorded spans, in neutral shapes. */

/** One step of a trace as exported: its structure and timing; every other field becomes an attribute. */
export interface ExportableSpan {
  readonly id: string
  readonly parentId: string | null
  readonly kind: string
  readonly name: string
  readonly startedAt: string
  readonly durationMs: number
  readonly status: "ok" | "error"
  readonly error?: string
}

/** The execution a trace belongs to (the root span of its export). */
export interface ExportedExecution {
  readonly id: string
  readonly organizationId: string
  readonly kind: string
  readonly targetId: string
  readonly status: string
  readonly error: string | null
  /** Epoch milliseconds of its start and end. */
  readonly startedMs: number
  readonly finishedMs: number
}
