/** Patterns the suites match ids and timestamps against. */

/** A UUID as the API writes it (lower-case hex, dashed). */
export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** An ISO 8601 timestamp as the API writes it (UTC, milliseconds). */
export const isoPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
