/**
 * The organization's runs as lists (issue 25): its conversations newest activity first with who
 * started them, a conversation's export as lines (streamed page by page), and its executions newest
 * activity first. Knows nothing of HTTP. Scopes follow the target's kind; organization keys and
 * admins list everyone's conversations, other members their own (docs/decisions.md, "Runs to follow").
 */
import { Chunk, Effect, Option, Stream } from "effect"
import type { ApiScope, Principal } from "../identity/domain.js"
import { InsufficientScope, type InvalidRequest, NotFound } from "../platform/errors.js"
import { Cursors, type Page } from "../platform/pagination.js"
import { PortalSignInRepo } from "../portal/repo.js"
import type { ExecutionKind, ExecutionStatus, TargetKind } from "../runtime/runs/domain.js"
import type { Execution } from "../runtime/runs/domain.js"
import { type ConversationListRow, RunListRepo } from "../runtime/runs/list-repo.js"
import { RunRepo } from "../runtime/runs/repo.js"
import { toExecution } from "../runtime/runs/service.js"
import type { ConversationSummary, ExportLine, StartedBy } from "./domain.js"

/** The `:execute` scope that reads each target kind's conversations. */
const conversationScope: Record<TargetKind, ApiScope> = { agent: "agents:execute", app: "apps:execute", flow: "flows:execute" }
/** The `:execute` scope that reads each kind of execution (a transaction is an App's). */
const executionScope: Record<ExecutionKind, ApiScope> = { agent: "agents:execute", app: "apps:execute", flow: "flows:execute", transaction: "apps:execute" }
const targetKinds: ReadonlyArray<TargetKind> = ["agent", "app", "flow"]
const executionKinds: ReadonlyArray<ExecutionKind> = ["agent", "app", "flow", "transaction"]

/** Messages read per page of an export. */
export const exportPageSize = 200

/** The query of `GET /conversations`. */
export interface ConversationQuery {
  readonly targetKind?: TargetKind | undefined
  readonly targetId?: string | undefined
  readonly endUserId?: string | undefined
  readonly since?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** The query of `GET /executions`. */
export interface ExecutionQuery {
  readonly kind?: ExecutionKind | undefined
  readonly status?: ExecutionStatus | undefined
  readonly since?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** Whether the caller lists the whole organization's conversations: an organization key, or a personal key (or sign-in) of an admin. */
export const seesEveryConversation = (actor: Principal): boolean => actor.member === null || actor.member.role === "admin"

/** The kinds among `all` whose scope the caller holds, narrowed to `asked`; `asked` without its scope is refused. */
const readableKinds = <K extends string>(
  actor: Principal,
  all: ReadonlyArray<K>,
  scopeOf: Record<K, ApiScope>,
  asked: K | undefined
): Effect.Effect<ReadonlyArray<K>, InsufficientScope> => {
  if (asked !== undefined && !actor.scopes.has(scopeOf[asked])) {
    return Effect.fail(new InsufficientScope({ message: `Listing ${asked} runs needs the scope '${scopeOf[asked]}'.` }))
  }
  const held = all.filter((kind) => actor.scopes.has(scopeOf[kind]) && (asked === undefined || kind === asked))
  return held.length === 0
    ? Effect.fail(new InsufficientScope({ message: `Listing runs needs an ':execute' scope (${[...new Set(all.map((kind) => scopeOf[kind]))].join(", ")}).` }))
    : Effect.succeed(held)
}

/** Who started a conversation, from its row and its Portal holder (if any). */
const starterOf = (row: ConversationListRow, holder: { portal_id: string; end_user_id: string } | undefined): StartedBy => {
  if (holder !== undefined) return { type: "end_user", apiKeyId: null, memberId: null, endUserId: holder.end_user_id, portalId: holder.portal_id }
  if (row.started_by_member_id !== null) {
    return { type: "member", apiKeyId: row.started_by_key_id, memberId: row.started_by_member_id, endUserId: null, portalId: null }
  }
  if (row.started_by_key_id !== null) return { type: "api_key", apiKeyId: row.started_by_key_id, memberId: null, endUserId: null, portalId: null }
  return { type: "unrecorded", apiKeyId: null, memberId: null, endUserId: null, portalId: null }
}

/** The organization's conversations and executions, and a conversation's export. */
export class RunLists extends Effect.Service<RunLists>()("svc/RunLists", {
  effect: Effect.gen(function* () {
    const lists = yield* RunListRepo
    const runs = yield* RunRepo
    const portal = yield* PortalSignInRepo
    const cursors = yield* Cursors

    return {
      /** One page of the organization's conversations the caller may list, newest activity first. */
      conversations: (actor: Principal, query: ConversationQuery): Effect.Effect<Page<ConversationSummary>, InsufficientScope | InvalidRequest> =>
        Effect.gen(function* () {
          const org = actor.organization.id
          const kinds = yield* readableKinds(actor, targetKinds, conversationScope, query.targetKind)
          const startedByMember = seesEveryConversation(actor) ? null : actor.member!.id
          // The cursor is bound to everything that decides the list, the caller's visibility included.
          const list = `conversations:${org}:${JSON.stringify([kinds, query.targetId ?? null, query.endUserId ?? null, query.since ?? null, startedByMember])}`
          const page = yield* cursors.request(list, query)
          const ids = query.endUserId === undefined ? null : yield* portal.conversationsHeldBy(query.endUserId)
          const rows = yield* lists.conversations(
            org,
            { kinds, targetId: query.targetId ?? null, since: query.since ?? null, startedByMember, ids },
            page
          )
          const built = cursors.page(list, page, rows, (row) => [row.updated_at, row.id])
          const holders = new Map((yield* portal.conversationHolders(built.items.map((row) => row.id))).map((h) => [h.conversation_id, h]))
          return {
            items: built.items.map((row) => ({
              id: row.id,
              targetKind: row.target_kind,
              targetId: row.target_id,
              startedBy: starterOf(row, holders.get(row.id)),
              turnCount: row.turn_count,
              lastActivityAt: row.updated_at,
              createdAt: row.created_at
            })),
            nextCursor: built.nextCursor
          }
        }),

      /**
       * A conversation's export: checked first (another organization's is `not_found`, a kind whose
       * scope the caller lacks `insufficient_scope`), then its lines as a stream that reads
       * `exportPageSize` messages (and the executions they name) at a time: each execution on the
       * line before its first message.
       */
      exportConversation: (actor: Principal, id: string): Effect.Effect<Stream.Stream<ExportLine>, NotFound | InsufficientScope> =>
        Effect.gen(function* () {
          const conversation = yield* runs.conversation(actor.organization.id, id)
          if (!conversation) return yield* new NotFound({ message: `No conversation '${id}' in this organization.` })
          const needed = conversationScope[conversation.target_kind]
          if (!actor.scopes.has(needed)) return yield* new InsufficientScope({ message: `Exporting this conversation needs the scope '${needed}'.` })
          const emitted = new Set<string>()
          const pageOf = (after: number) =>
            Effect.gen(function* () {
              const messages = yield* runs.messages(conversation.id, { limit: exportPageSize, after: [after] })
              const shown = messages.slice(0, exportPageSize)
              const named = [...new Set(shown.flatMap((m) => (m.execution_id !== null && !emitted.has(m.execution_id) ? [m.execution_id] : [])))]
              const executions = new Map((yield* lists.conversationExecutions(conversation.id, named)).map((row) => [row.id, row]))
              const lines: Array<ExportLine> = []
              for (const message of shown) {
                const execution = message.execution_id === null ? undefined : executions.get(message.execution_id)
                if (execution !== undefined && !emitted.has(execution.id)) {
                  emitted.add(execution.id)
                  lines.push({ type: "execution", ...toExecution(execution) } as ExportLine)
                }
                const { id: messageId, role, text, execution_id, created_at } = message
                lines.push({ type: "message", id: messageId, role, text, executionId: execution_id, createdAt: created_at })
              }
              const last = shown[shown.length - 1]
              const next = messages.length > exportPageSize && last !== undefined ? Option.some(last.sequence) : Option.none()
              return [Chunk.unsafeFromArray(lines), next] as const
            })
          return Stream.paginateChunkEffect(0, pageOf)
        }),

      /** One page of the organization's executions of the kinds the caller may read, newest activity first (summary view). */
      executions: (actor: Principal, query: ExecutionQuery): Effect.Effect<Page<Execution>, InsufficientScope | InvalidRequest> =>
        Effect.gen(function* () {
          const org = actor.organization.id
          const kinds = yield* readableKinds(actor, executionKinds, executionScope, query.kind)
          const list = `executions:${org}:${JSON.stringify([kinds, query.status ?? null, query.since ?? null])}`
          const page = yield* cursors.request(list, query)
          const rows = yield* lists.executions(org, { kinds, status: query.status ?? null, since: query.since ?? null }, page)
          const built = cursors.page(list, page, rows, (row) => [row.activity_at, row.id])
          return { items: built.items.map((row) => toExecution(row, true)), nextCursor: built.nextCursor }
        })
    }
  }),
  dependencies: [RunListRepo.Default, RunRepo.Default, PortalSignInRepo.Default, Cursors.Default]
}) {}
