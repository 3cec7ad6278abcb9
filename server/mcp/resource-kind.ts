/**
 * What a kind of MCP resource is here: a URI template (`resource-uris.ts`), the REST read it mirrors
 * (whose scopes and gate admit a reader, as for a tool), the tool families it comes with, how one is
 * read, how its template's variables complete (`completion/complete`) and, for pages, how they are
 * listed. `session.ts` registers each kind once per connection, and admits each read and completion
 * as one request of the caller's key.
 */
import { Effect } from "effect"
import type { ApiFailure } from "../platform/errors.js"
import { admits } from "../mcp-door/admits.js"
import { completedIds } from "../mcp-door/completion.js"
import type { FamilyName } from "../mcp-door/family-names.js"
import type { Operation } from "../mcp-door/operation.js"
import type { Named } from "../mcp-door/resolve.js"
import type { CallContext } from "../mcp-door/tool.js"

/** A resource as `resources/list` answers it. */
export interface ListedResource {
  readonly uri: string
  readonly name: string
  readonly title: string
  readonly mimeType: string
  readonly description: string
}

/** The values of a template's variables: those of the address, or those a completion names (`context.arguments`). */
export type TemplateValues = Readonly<Record<string, string | undefined>>

/** Completes one variable of a template: the ids `value` matches (never fails: nothing readable is none). */
export type VariableCompletion<R = any> = (call: CallContext, value: string, others: TemplateValues) => Effect.Effect<ReadonlyArray<string>, never, R>

/** One kind of resource. */
export interface ResourceKind<R = any> {
  /** Its registration name (`page`). */
  readonly name: string
  readonly template: string
  readonly title: string
  readonly description: string
  readonly mimeType: string
  /** The REST read it mirrors: its scopes and gate admit a reader. */
  readonly operation: Operation
  /** Offered when any of these families is selected at the address (`?tools=`). */
  readonly families: ReadonlyArray<FamilyName>
  /** Its text, read for the caller from the address's variables. */
  readonly read: (call: CallContext, values: TemplateValues) => Effect.Effect<string, ApiFailure, R>
  /** How each variable of the template completes. */
  readonly complete: Readonly<Record<string, VariableCompletion<R>>>
  /** The resources listed (absent: reached through links and the template only). */
  readonly list?: ((call: CallContext) => Effect.Effect<ReadonlyArray<ListedResource>, never, R>) | undefined
}

/** Whether `call` may read resources of `kind` now: a family of it selected, and its operation's scopes and gate admit the caller. */
export const readable = (call: CallContext, kind: Pick<ResourceKind, "families" | "operation">): boolean =>
  kind.families.some((family) => call.families.has(family)) && admits(call.principal, kind.operation)

/** A variable's value as a string ("" when absent). */
export const valueOf = (values: TemplateValues, name: string): string => values[name] ?? ""

/** The ids of `candidates` that `value` matches (`completedIds`), or none when they cannot be read. */
export const completing = <E, R>(value: string, candidates: Effect.Effect<ReadonlyArray<Named>, E, R>): Effect.Effect<ReadonlyArray<string>, never, R> =>
  Effect.catchAll(
    Effect.map(candidates, (all) => completedIds(value, all)),
    () => Effect.succeed([])
  )
