/** The Knowledgebases feature's MCP tools: the `knowledge` family (reads, writes and the member's own memories). */
import { familyTools } from "../../mcp-door/family-tools.js"
import { memoryTools } from "./memories.js"
import { knowledgeReadTools } from "./reads.js"
import { knowledgeWriteTools } from "./writes.js"

/** Knowledgebase reads (`knowledge:read`), writes (`knowledge:write`) and memories. */
export const knowledgeTools = familyTools("knowledge", [...knowledgeReadTools, ...knowledgeWriteTools, ...memoryTools])
