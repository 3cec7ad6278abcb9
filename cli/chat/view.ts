/** What shows a chat's turns: printed lines, JSON Lines or the ink view. */
import type { StreamEvent } from "../../sdk/index.js"
import type { ChatReply } from "./target.js"

/** Where a turn's events go: printed as they come; answers the conversation to continue. */
export interface ChatView {
  readonly event: (event: StreamEvent<ChatReply>) => void
  /** A turn failed after its events began (with `--json`, its error line is written). */
  readonly failed: (error: unknown) => void
}
