/**
 * The member's own memories (conventions: Memories): `remember`, `list_memories`, `forget`. Every
 * MCP connection is a person, so these always act on the caller's member; another member's memory
 * is `not_found`. Personal notes: `knowledge:read` admits them (viewers keep notes too). The REST API
 * has no memory endpoints (search finds memories), so these tools keep their own rule.
 */
import { Effect, Schema } from "effect"
import * as z from "zod/v4"
import type { Principal } from "../../identity/domain.js"
import { InsufficientScope } from "../../platform/errors.js"
import { Cursors } from "../../platform/pagination.js"
import { MemoryService } from "./service.js"
import { tool } from "../../mcp-door/tool.js"
import { listInput } from "../../mcp-door/shared-arguments.js"

/** Why the memory tools have no REST twin. */
const noTwin = "memories are kept over MCP only (conventions: Memories); REST has no memory endpoints, and its search finds them"

/** A memory as the tools answer it (`Memory` of the memory service). */
const MemoryAnswer = Schema.Struct({ id: Schema.String, text: Schema.String, createdAt: Schema.String, updatedAt: Schema.String })

const memberOf = (principal: Principal) =>
  principal.member === null
    ? Effect.fail(new InsufficientScope({ message: "Memories belong to a member; this connection acts for no member." }))
    : Effect.succeed(principal.member)

const remember = tool({
  name: "remember",
  title: "Remember a note",
  description: "Keep a personal note (a memory). Your memories are found by `search_knowledgebase` with `kinds` including `memories`.",
  input: { text: z.string().min(1).max(10_000).describe("The note, 1 to 10000 characters.") },
  operation: null,
  noTwin,
  output: { schema: Schema.Struct({ memory: MemoryAnswer }) },
  scopes: ["knowledge:read"],
  hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const member = yield* memberOf(principal)
      return { memory: yield* (yield* MemoryService).add(principal.organization.id, member.id, args.text) }
    })
})

const listMemories = tool({
  name: "list_memories",
  title: "List your memories",
  description: "Your own memories, oldest first.",
  input: { ...listInput },
  operation: null,
  noTwin,
  output: { schema: Schema.Struct({ items: Schema.Array(MemoryAnswer), nextCursor: Schema.NullOr(Schema.String) }) },
  scopes: ["knowledge:read"],
  hints: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const member = yield* memberOf(principal)
      const cursors = yield* Cursors
      const list = `memories:${member.id}`
      const request = yield* cursors.request(list, args)
      const all = yield* (yield* MemoryService).of(member.id)
      const after = request.after
      const rest = after === null ? all : all.filter((memory) => memory.createdAt > String(after[0]) || (memory.createdAt === after[0] && memory.id > String(after[1])))
      const page = cursors.page(list, request, rest.slice(0, request.limit + 1), (memory) => [memory.createdAt, memory.id])
      return { items: page.items, nextCursor: page.nextCursor }
    })
})

const forget = tool({
  name: "forget",
  title: "Forget a memory",
  description: "Delete one of your memories.",
  input: { memoryId: z.string().min(1).describe("The memory's id (from `list_memories` or `remember`).") },
  operation: null,
  noTwin,
  output: { schema: Schema.Struct({ ok: Schema.Literal(true), memoryId: Schema.String }) },
  scopes: ["knowledge:read"],
  hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const member = yield* memberOf(principal)
      return yield* (yield* MemoryService).remove(member.id, args.memoryId)
    })
})

/** The memory tools (in the knowledge family). */
export const memoryTools = [remember, listMemories, forget] as const
