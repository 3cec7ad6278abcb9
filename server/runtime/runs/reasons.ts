/** The reasons recorded on executions that did not finish on their own. */

/** The reason recorded on an execution a stopped server never finished. */
export const abandonedByServer = "The server stopped before the run finished."

/** The reason recorded on an execution cut short by its client. */
export const cancelledByClient = "The client disconnected before the reply was complete."

/** The reason recorded on a streamed or detached run a closing server stopped (its drain time ran out). */
export const stoppedByServer = "The server stopped before the run finished; nothing was charged."
