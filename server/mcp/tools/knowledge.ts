/** The `knowledge` family: Knowledgebase reads and writes and the member's own memories. */
import { staticFamily } from "../families.js"
import { knowledgeReadTools } from "./knowledge-reads.js"
import { knowledgeWriteTools } from "./knowledge-writes.js"
import { memoryTools } from "./memories.js"

/** Knowledgebase reads (`knowledge:read`), writes (`knowledge:write`) and memories. */
export const knowledgeFamily = staticFamily("knowledge", "Knowledgebases: read, search, write, upload; your memories.", [
  ...knowledgeReadTools,
  ...knowledgeWriteTools,
  ...memoryTools
])
