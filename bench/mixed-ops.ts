/**
 * The operations of the mixed benchmark (bench/mixed.ts), their weights, the request each sends and
 * how its answer is checked.
 *
 * | operation     | weight | request                                                                  |
 * |---------------|-------:|--------------------------------------------------------------------------|
 * | read          |    35% | `GET /knowledgebases?limit=20` (a listing the cache can serve)           |
 * | search        |    15% | `POST /knowledgebases/{demo}/search` `{query, kinds: ["pages"]}`         |
 * | keyed-create  |    10% | `POST /knowledgebases` with a new `Idempotency-Key` (as the SDK and CLI) |
 * | patch         |    10% | `PATCH /knowledgebases/{id}/pages/{pageId}`, one `append`, pages in turn |
 * | turn          |    10% | `POST /agents/{id}/conversation` on the fake model (bench/fake-model.ts) |
 * | mcp           |    15% | `tools/call` `read_page` over `POST /mcp?tools=knowledge`, in a session  |
 * | provision     |     5% | `POST /end-users`, a new email with a tier plan and a group              |
 *
 * Why these proportions: an integration reads far more than it writes, so reads are about two thirds
 * (listings 35%, search 15%, MCP reads 15%: the door assistants use carries as much as search); the
 * writes (keyed creates, page edits, provisioning) are a quarter; Agent turns, the product's reason to
 * exist and its costliest request, are a tenth. Each operation weighs at least 5%, so its own p99
 * rests on hundreds of answers in a 10 s run.
 */
import { protocolVersion, toolCall } from "./mcp-session.js"

/** The operations of the mix, in the order of {@link mix}. */
export type OperationName = "read" | "search" | "keyed-create" | "patch" | "turn" | "mcp" | "provision"

/** An operation of the mix and its share of the requests, in percent. */
export interface MixedOperation {
  readonly name: OperationName
  readonly weight: number
  /** The request, for the report. */
  readonly request: string
}

/** The mix (the table above); the weights sum to 100. */
export const mix: ReadonlyArray<MixedOperation> = [
  { name: "read", weight: 35, request: "GET /knowledgebases?limit=20" },
  { name: "search", weight: 15, request: "POST /knowledgebases/{id}/search (pages)" },
  { name: "keyed-create", weight: 10, request: "POST /knowledgebases + Idempotency-Key" },
  { name: "patch", weight: 10, request: "PATCH /knowledgebases/{id}/pages/{pageId}" },
  { name: "turn", weight: 10, request: "POST /agents/{id}/conversation (fake model)" },
  { name: "mcp", weight: 15, request: "MCP tools/call read_page" },
  { name: "provision", weight: 5, request: "POST /end-users (plan + group)" }
]

/**
 * The order requests are sent in: each operation `weight` times in 100 slots, shuffled with a fixed
 * seed (so every run sends the same sequence), taken in turn by every connection.
 */
export const scheduleOf = (operations: ReadonlyArray<MixedOperation>, seed = 22): ReadonlyArray<OperationName> => {
  const slots = operations.flatMap((op) => Array.from({ length: op.weight }, () => op.name))
  let state = seed >>> 0
  const random = () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
  for (let i = slots.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[slots[i], slots[j]] = [slots[j]!, slots[i]!]
  }
  return slots
}

/** What the requests of the mix need: the server's keys and the ids set up for it. */
export interface MixedTarget {
  /** The all-scopes key of organization `default`. */
  readonly key: string
  /** The personal key the MCP sessions were opened with. */
  readonly personalKey: string
  /** One MCP session per connection. */
  readonly sessions: ReadonlyArray<string>
  /** The searched Knowledgebase and the page the MCP call reads (the demo's). */
  readonly knowledgebaseId: string
  readonly pageId: string
  /** The Knowledgebase whose pages are patched, and its pages. */
  readonly patchKnowledgebaseId: string
  readonly patchPageIds: ReadonlyArray<string>
  /** A published Agent on the fake model. */
  readonly agentId: string
  readonly tierPlanId: string
  readonly groupId: string
  /** Keys of the Agency organizations the keyed creates go to, {@link createsPerKey} each. */
  readonly createKeys: ReadonlyArray<string>
  /** Makes the provisioned emails of this run unique. */
  readonly runLabel: string
}

/** Keyed creates per organization: an Agency organization holds 200 Knowledgebases. */
export const createsPerKey = 200

/** One request to send, and the status that means it worked. */
export interface MixedRequest {
  readonly method: "GET" | "POST" | "PATCH"
  /** Path and query from the origin. */
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string | undefined
  readonly expect: number
}

/** Builds the requests of each operation; counters make every create, email and patched page new. */
export const requestBuilder = (target: MixedTarget): ((op: OperationName, connection: number) => MixedRequest) => {
  let creates = 0
  let patches = 0
  let provisioned = 0
  const json = (key: string) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" })
  const paragraph = "A line appended by the benchmark.\n"
  return (op, connection) => {
    switch (op) {
      case "read":
        return { method: "GET", path: "/api/v1/knowledgebases?limit=20", headers: { authorization: `Bearer ${target.key}` }, expect: 200 }
      case "search":
        return {
          method: "POST",
          path: `/api/v1/knowledgebases/${target.knowledgebaseId}/search`,
          headers: json(target.key),
          body: JSON.stringify({ query: "How long do I have to return a chair?", kinds: ["pages"] }),
          expect: 200
        }
      case "keyed-create": {
        const n = creates++
        const key = target.createKeys[Math.min(Math.floor(n / createsPerKey), target.createKeys.length - 1)]!
        return {
          method: "POST",
          path: "/api/v1/knowledgebases",
          headers: { ...json(key), "idempotency-key": `mixed-${target.runLabel}-${n}` },
          body: JSON.stringify({ name: `Mixed ${n}` }),
          expect: 201
        }
      }
      case "patch":
        return {
          method: "PATCH",
          path: `/api/v1/knowledgebases/${target.patchKnowledgebaseId}/pages/${target.patchPageIds[patches++ % target.patchPageIds.length]}`,
          headers: json(target.key),
          body: JSON.stringify({ patch: [{ op: "append", text: paragraph }] }),
          expect: 200
        }
      case "turn":
        return {
          method: "POST",
          path: `/api/v1/agents/${target.agentId}/conversation`,
          headers: json(target.key),
          body: JSON.stringify({ message: "How long do I have to return a chair?" }),
          expect: 200
        }
      case "mcp":
        return {
          method: "POST",
          path: "/mcp?tools=knowledge",
          headers: {
            ...json(target.personalKey),
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": protocolVersion,
            "mcp-session-id": target.sessions[connection % target.sessions.length]!
          },
          body: toolCall("read_page", { knowledgebaseId: target.knowledgebaseId, pageId: target.pageId }),
          expect: 200
        }
      case "provision": {
        const n = provisioned++
        return {
          method: "POST",
          path: "/api/v1/end-users",
          headers: json(target.key),
          body: JSON.stringify({
            email: `mixed-${target.runLabel}-${n}@example.com`,
            fullName: `Mixed ${n}`,
            tierPlanIds: [target.tierPlanId],
            groupIds: [target.groupId]
          }),
          expect: 201
        }
      }
    }
  }
}

/**
 * Why an answer does not count as done, or null when it does: its status must be the expected one,
 * and an MCP answer (JSON, or the last `data:` line of an event stream) must be a JSON-RPC result
 * that is not a tool error.
 */
export const answerProblem = (op: OperationName, expected: number, status: number, contentType: string, body: string): string | null => {
  if (status !== expected) return `${status}: ${body.slice(0, 300)}`
  if (op !== "mcp") return null
  const text = contentType.includes("text/event-stream")
    ? (body
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .at(-1)
        ?.slice(5) ?? "")
    : body
  try {
    const message = JSON.parse(text) as { result?: { isError?: boolean }; error?: unknown }
    if (message.error !== undefined || message.result === undefined) return `JSON-RPC error: ${text.slice(0, 300)}`
    if (message.result.isError === true) return `tool error: ${text.slice(0, 300)}`
    return null
  } catch {
    return `not JSON-RPC: ${body.slice(0, 300)}`
  }
}
