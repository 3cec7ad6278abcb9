/** Request size limits every endpoint shares (spec: Limits). */

/** Largest accepted request body: "the 4.5 MB request limit". */
export const maxRequestBodyBytes = 4_500_000

/** Bodies declared over the limit but under this are read and discarded before the 413, so clients see it. */
export const drainLimitBytes = 64_000_000
