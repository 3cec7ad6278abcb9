/** The contract's pieces of run events: the events endpoint's query, headers and answer, and the note on `detach` and event ids. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

/** Said of every operation that takes `stream` and `detach`. */
export const detachNote =
  "Every streamed event carries an `id:` (its position in the run); a stream cut short resumes with `GET /executions/{id}/events` and `Last-Event-ID`, and the run goes on when its client goes away. With `detach: true` the answer is 202 `{executionId, conversation_id?}` once the run began, and it runs to its end with nobody listening."

const eventId = Schema.String.annotations({ jsonSchema: { type: "string", pattern: "^[0-9]{1,15}$" } })

/** `?after=N`: resume after the event of id N (for clients that cannot send `Last-Event-ID`, such as a browser's first `EventSource` connection). */
export const ExecutionEventsQuery = Schema.Struct({
  after: Schema.optional(
    eventId.annotations({ description: "Answer the events after this id (as `Last-Event-ID`, which wins when both are sent)." })
  )
}).annotations({ parseOptions: { onExcessProperty: "error", errors: "all" } })

/** `Last-Event-ID`: resume after that event. */
export const ExecutionEventsHeaders = Schema.Struct({
  "last-event-id": Schema.optional(eventId.annotations({ description: "Answer the events after this id (what `EventSource` sends when it reconnects)." }))
})

/** The events answer: `text/event-stream`. */
export const RunEventStream = HttpApiSchema.withEncoding(
  Schema.String.annotations({
    identifier: "RunEventStream",
    description:
      "Server-Sent Events: `id: N`, `event: start|delta|tool|done|error`, `data: {…}` as the run's stream sent them, ending with one `done` or `error`."
  }),
  { kind: "Text", contentType: "text/event-stream" }
)

/** An event id given as text (`Last-Event-ID` or `after`): a whole number, or null when it is not one. */
export const parsedEventId = (text: string): number | null => (/^[0-9]{1,15}$/.test(text.trim()) ? Number(text.trim()) : null)
