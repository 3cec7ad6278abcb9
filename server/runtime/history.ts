/**
 * The history budget: what of a conversation is sent to the model. Tokens are estimated as
 * ceil(characters / 4) (a fair average for English with the common tokenizers, and never zero for
 * a non-empty text). The newest turns are kept while history and the new message fit the budget;
 * the first older turn that does not fit ends the history (no gaps), and the new message is always
 * sent, even alone over the budget. Instructions and tool results are not counted.
 */
import type { ChatTurn } from "./model.js"

/** Estimated tokens of a text: ceil(characters / 4). */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/** The newest turns of `history` (oldest first) that fit in `budget` tokens beside `message`. */
export const boundHistory = (history: ReadonlyArray<ChatTurn>, message: string, budget: number): Array<ChatTurn> => {
  let left = budget - estimateTokens(message)
  let first = history.length
  while (first > 0) {
    const cost = estimateTokens(history[first - 1]!.text)
    if (cost > left) break
    left -= cost
    first -= 1
  }
  return history.slice(first)
}
