/**
 * What an MCP tool is here: a name, a precise zod input schema, the REST operation(s) it mirrors
 * (from which its scopes, gate, hints, title and output schema come, and the bounds of the arguments
 * it shares with them), and an effect over the services the REST handlers use. A tool with no REST
 * twin says why and keeps its own rule, its output declared as an Effect Schema. Results and failures
 * become MCP tool results: the value as `structuredContent` and as JSON text, or `isError: true`
 * with the REST error envelope `{error:{code,message}}`.
 */
import type { CallToolResult, ResourceLink } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Exit, FiberRef } from "effect"
import type * as z from "zod/v4"
import type { ApiScope, Gate, Principal } from "../identity/domain.js"
import { type ApiFailure, ServerError } from "../platform/errors.js"
import { envelopeBody, isApiFailure } from "../platform/request/error-catalog.js"
import { nulTextRefusal } from "../platform/sql/text-refusal.js"
import { project } from "../platform/pagination.js"
import type { FamilyName } from "./family-names.js"
import type { JsonSchema, Operation, OperationHints } from "./operation.js"
import { declaredSchema, type DeclaredOutput, type Derivation, restBody } from "./output.js"
import { resourceLinks } from "./resource-links.js"
import { resolvedArguments } from "./resolve.js"

/** Who is calling and what they asked for, fresh on every request. */
export interface CallContext {
  readonly principal: Principal
  /** The families selected at the address (`?tools=`). */
  readonly families: ReadonlySet<FamilyName>
  /** Whether the organization may run Agents, Flows and Apps over MCP (not on a trial). */
  readonly runsAllowed: boolean
  /** Of `families`, those the caller is offered a tool of (their role and scopes allow one); set once the list is built. */
  readonly offeredFamilies?: ReadonlySet<FamilyName> | undefined
}

/** The scopes a tool needs instead of its operation's, and why (a rule of the service, not of the route). */
export interface ScopeRule {
  readonly scopes: ReadonlyArray<ApiScope>
  readonly because: string
}

/** One tool of the list a member is offered. */
export interface McpTool<R = any> {
  readonly name: string
  /** A short title for people: its operation's OpenAPI summary, or the tool's own when it declares one. */
  readonly title: string
  readonly description: string
  /** The JSON Schema of its answer (`type: "object"` at the top): derived from its operations, or declared. */
  readonly outputSchema: JsonSchema
  /** How its answer relates to its operations' (`the REST body as is`), or why it declares its own. */
  readonly answers: string
  /** The arguments: a zod object shape (camelCase names; required ones not optional), or a zod object. */
  readonly input: z.ZodRawShape | z.ZodType
  /** The REST operations the tool mirrors (`knowledgebases.search`); empty when it has no REST twin. */
  readonly operations: ReadonlyArray<Operation>
  /** Why the tool has no REST twin (null when it mirrors operations). */
  readonly noTwin: string | null
  /** Arguments the tool declares itself rather than taking from its operation, each with why. */
  readonly ownArguments: Readonly<Record<string, string>>
  /** The scopes the tool needs instead of its operations', and why (absent: its operations'). */
  readonly scopeRule?: ScopeRule | undefined
  /** Any one of these admits the member (empty: every member): its operations' unless the tool has no twin or a `scopeRule`. */
  readonly scopes: ReadonlyArray<ApiScope>
  /** The organization gate the tool needs: the one all its operations share. */
  readonly gate?: Gate | undefined
  /** Read-only, destructive and idempotent hints: its operations' together (all read-only, any destructive, all idempotent). */
  readonly hints?: OperationHints | undefined
  /** A run (refused with `feature_not_available` on a trial: MCP's own rule, spec: Availability). */
  readonly run?: boolean | undefined
  /** Changes when a tool built from data (a per-item tool) changes, so its registration is renewed. */
  readonly signature?: string | undefined
  /** Leaves argument names as sent (Flow tools: their parameters are snake_case by design). */
  readonly literalArguments?: boolean | undefined
  readonly handler: (args: any, call: CallContext) => Effect.Effect<unknown, ApiFailure, R>
}

/** How a tool that mirrors REST operations declares them: its scopes, gate and hints follow. */
export interface MirrorsOperations {
  readonly operation: Operation | ReadonlyArray<Operation>
  readonly scopeRule?: ScopeRule
  /** How its answer is made from its operations' (absent: `restBody`), or an answer of its own, with why. */
  readonly output?: Derivation | (DeclaredOutput & { readonly because: string })
  readonly noTwin?: never
  readonly scopes?: never
  readonly gate?: never
  readonly hints?: never
}

/** How a tool without a REST twin declares its own rule. */
export interface HasNoTwin {
  readonly operation: null
  /** Why there is no REST operation to mirror. */
  readonly noTwin: string
  readonly scopes: ReadonlyArray<ApiScope>
  readonly gate?: Gate
  readonly hints?: OperationHints
  /** Its answer, declared as an Effect Schema (there is no REST answer to derive it from). */
  readonly output: DeclaredOutput
  /** Its title: there is no operation summary to take. */
  readonly title: string
  readonly scopeRule?: never
}

/** What every tool declares besides its operation. */
export interface ToolSpec<Shape extends z.ZodRawShape, R> {
  readonly name: string
  /** A title of its own (required when it mirrors several operations: their summaries name none of them alone). */
  readonly title?: string
  readonly description: string
  readonly input: Shape
  /** Arguments declared by the tool itself (an id-or-name argument, a list where REST takes a string), each with why. */
  readonly ownArguments?: { readonly [K in keyof Shape]?: string }
  readonly run?: boolean
  readonly signature?: string
  readonly literalArguments?: boolean
  readonly handler: (args: z.infer<z.ZodObject<Shape>>, call: CallContext) => Effect.Effect<unknown, ApiFailure, R>
}

const unique = <A>(items: ReadonlyArray<A>): Array<A> => [...new Set(items)]

/** What several operations need together: any one's scope admits; a gate only when all share it. */
export const joinedPolicy = (operations: ReadonlyArray<Operation>) => {
  const gates = unique(operations.map((one) => one.gate))
  return {
    scopes: unique(operations.flatMap((one) => one.scopes)),
    gate: gates.length === 1 ? gates[0] : undefined,
    hints: {
      readOnlyHint: operations.every((one) => one.hints.readOnlyHint),
      destructiveHint: operations.some((one) => one.hints.destructiveHint),
      idempotentHint: operations.every((one) => one.hints.idempotentHint)
    }
  }
}

/** The argument names of a tool's input (a zod object shape, or a zod object). */
const argumentNamesOf = (input: McpTool["input"]): ReadonlySet<string> => {
  const shape = (input as { shape?: object }).shape ?? ((input as { _zod?: unknown })._zod === undefined ? input : {})
  return new Set(Object.keys(shape))
}

/**
 * Output schemas by derivation, then by operations (`save_page`: `restBody` over `pages.create` and
 * `pages.update`), so tools built again for every caller (per-item tools) derive theirs once.
 */
const derived = new WeakMap<Derivation, Map<string, JsonSchema>>()

/** The output schema `output` derives from `operations` for a tool taking `argumentNames`. */
const derivedSchema = (output: Derivation, operations: ReadonlyArray<Operation>, argumentNames: ReadonlySet<string>): JsonSchema => {
  let byOperations = derived.get(output)
  if (byOperations === undefined) derived.set(output, (byOperations = new Map()))
  const key = JSON.stringify([operations.map((one) => one.name), argumentNames.has("fields")])
  let schema = byOperations.get(key)
  if (schema === undefined) byOperations.set(key, (schema = output.derive(operations, { argumentNames })))
  return schema
}

/** A tool from its declaration (keeping its argument types for the handler). */
export const mcpTool = <R>(spec: ToolSpec<any, R> & (MirrorsOperations | HasNoTwin), input: McpTool["input"]): McpTool<R> => {
  const { operation, ownArguments, output, title, ...rest } = spec
  const common = { ...rest, input, ownArguments: (ownArguments ?? {}) as Record<string, string> }
  let outputSchema: JsonSchema | undefined
  if (operation === null) {
    const own = spec as HasNoTwin
    return {
      ...common,
      title: own.title,
      get outputSchema() {
        return (outputSchema ??= declaredSchema(own.output))
      },
      answers: `its own answer: ${own.noTwin}`,
      operations: [],
      noTwin: own.noTwin,
      scopes: own.scopes,
      gate: own.gate,
      hints: own.hints
    }
  }
  const operations = Array.isArray(operation) ? (operation as ReadonlyArray<Operation>) : [operation as Operation]
  if (operations.length === 0) throw new Error(`MCP tool ${spec.name}: name the operations it mirrors, or none with noTwin.`)
  if (title === undefined && operations.length > 1) throw new Error(`MCP tool ${spec.name}: it mirrors several operations; give it a title.`)
  const policy = joinedPolicy(operations)
  const scopeRule = (spec as MirrorsOperations).scopeRule
  const answer = (output ?? restBody) as Derivation | (DeclaredOutput & { readonly because: string })
  const argumentNames = argumentNamesOf(input)
  return {
    ...common,
    title: title ?? operations[0]!.summary,
    get outputSchema() {
      return (outputSchema ??= "derive" in answer ? derivedSchema(answer, operations, argumentNames) : declaredSchema(answer))
    },
    answers: "derive" in answer ? answer.says : `its own answer: ${answer.because}`,
    operations,
    noTwin: null,
    scopeRule,
    scopes: scopeRule?.scopes ?? policy.scopes,
    gate: policy.gate,
    hints: policy.hints
  }
}

/** Declares a tool, keeping its argument types for the handler. */
export const tool = <Shape extends z.ZodRawShape, R>(spec: ToolSpec<Shape, R> & (MirrorsOperations | HasNoTwin)): McpTool<R> =>
  mcpTool(spec as ToolSpec<any, R> & (MirrorsOperations | HasNoTwin), spec.input)

/** Why an argument naming a resource by id or exact name is the tool's own (REST takes the id in the path or body). */
export const idOrName = "an id or an exact name, resolved by the tool; REST takes the id itself"

/** Why `fields` is the tool's own: a list of names, where REST's `fields` query parameter is comma-separated. */
export const fieldsList = "a list of field names, where REST's `fields` query parameter is one comma-separated string"

/** A run's answer with camelCase names (`conversation_id` becomes `conversationId`). */
export const camelReply = <A extends object>(answer: A): Record<string, unknown> =>
  Object.fromEntries(Object.entries(answer).map(([key, value]) => [key === "conversation_id" ? "conversationId" : key, value]))

/**
 * A tool's value as its MCP result: `structuredContent`, the value itself (checked by clients against
 * the tool's `outputSchema`), and the same value as one JSON text for clients older than structured
 * results. Every answer is thus sent twice; the text is what the tools answered before, kept so that
 * no client loses it (docs/decisions.md: MCP, a door of the feature registry). `links`, the pages
 * and sources the value names (`resource-links.ts`), follow the text.
 */
export const valueResult = (value: unknown, links: ReadonlyArray<ResourceLink> = []): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }, ...links],
  structuredContent: value as Record<string, unknown>
})

/** A failure as an MCP tool error carrying the REST envelope. */
export const errorResult = (error: ApiFailure): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: JSON.stringify(envelopeBody(error)) }]
})

/** The tool result of a finished effect: its value (with `links`), its expected failure, or `server_error` for a defect. */
export const resultOfExit = (
  exit: Exit.Exit<unknown, unknown>,
  links: ReadonlyArray<ResourceLink> = []
): { result: CallToolResult; defect: Cause.Cause<unknown> | null } => {
  if (Exit.isSuccess(exit)) return { result: valueResult(exit.value, links), defect: null }
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some" && isApiFailure(failure.value)) return { result: errorResult(failure.value), defect: null }
  const refusal = nulTextRefusal(exit.cause)
  if (refusal !== null) return { result: errorResult(refusal), defect: null }
  return {
    result: errorResult(new ServerError({ message: "The tool failed on the server; it is safe to retry." })),
    defect: exit.cause
  }
}

/**
 * Runs a tool's effect to its MCP result; never fails (a defect is logged and answered `server_error`).
 * With `answers`, the tool's output schema, a value carries links to the pages and sources it names.
 */
export const toolEffect = <R>(effect: Effect.Effect<unknown, ApiFailure, R>, name: string, answers?: JsonSchema): Effect.Effect<CallToolResult, never, R> =>
  Effect.locally(
    Effect.flatMap(Effect.exit(effect), (exit) =>
      Effect.flatMap(FiberRef.get(resolvedArguments), (resolved) => {
        const links = answers !== undefined && Exit.isSuccess(exit) ? resourceLinks(answers, exit.value, resolved) : []
        const { result, defect } = resultOfExit(exit, links)
        return defect === null ? Effect.succeed(result) : Effect.as(Effect.logError(`MCP tool ${name} failed`, defect), result)
      })
    ),
    resolvedArguments,
    new Map()
  )

/** A page of a service as MCP lists answer it: `{items, nextCursor}`, each item cut to `fields` when given. */
export const itemsPage = <A extends object>(
  page: { readonly items: ReadonlyArray<A>; readonly nextCursor: string | null },
  fields: ReadonlyArray<string> | null | undefined
): { readonly items: ReadonlyArray<Partial<A>>; readonly nextCursor: string | null } => ({
  items: page.items.map((item) => project(item, fields ?? null)),
  nextCursor: page.nextCursor
})
