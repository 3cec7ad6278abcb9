/** Request size limits every endpoint shares (spec: Limits). */

/** Largest accepted request body: "the 4.5 MB request limit". */
export const maxRequestBodyBytes = 4_500_000

/** Bodies declared over the limit but under this are read and discarded before the 413, so clients see it. */
export const drainLimitBytes = 64_000_000

/**
 * How long a request may take to arrive, headers and body (Node's `requestTimeout`): a body that
 * stops arriving, or trickles, is cut with 408 after it. A minute lets the largest body (4.5 MB)
 * arrive at 75 KB/s; Node's own default is five minutes.
 */
export const requestArrivalMs = 60_000

