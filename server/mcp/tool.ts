/**
 * What an MCP tool is here: a name, a precise zod input schema, the scopes that admit it (the same
 * scopes as the REST endpoint it mirrors), and an effect over the services the REST handlers use.
 * Results and failures become MCP tool results: the value as JSON, or `isError: true` with the REST
 * error envelope `{error:{code,message}}`.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Exit } from "effect"
import type * as z from "zod/v4"
import type { ApiScope, Gate, Principal } from "../platform/accounts/domain.js"
import { type ApiFailure, ServerError } from "../platform/errors.js"
import { envelopeBody, isApiFailure } from "../platform/http/error-catalog.js"
import { nulTextRefusal } from "../platform/sql/text-refusal.js"
import { project } from "../platform/pagination.js"
import type { FamilyName } from "./family-names.js"

/** Who is calling and what they asked for, fresh on every request. */
export interface CallContext {
  readonly principal: Principal
  /** The families selected at the address (`?tools=`). */
  readonly families: ReadonlySet<FamilyName>
  /** Whether the organization may run Agents, Flows and Apps over MCP (not on a trial). */
  readonly runsAllowed: boolean
}

/** One tool of the list a member is offered. */
export interface McpTool<R = any> {
  readonly name: string
  readonly description: string
  /** The arguments: a zod object shape (camelCase names; required ones not optional), or a zod object. */
  readonly input: z.ZodRawShape | z.ZodType
  /** Any one of these admits the member (empty: every member). */
  readonly scopes: ReadonlyArray<ApiScope>
  /** The organization gate the tool needs, as its REST endpoints do (`apps`). */
  readonly gate?: Gate | undefined
  /** A run (refused with `feature_not_available` on a trial). */
  readonly run?: boolean | undefined
  /** Changes when a tool built from data (a per-item tool) changes, so its registration is renewed. */
  readonly signature?: string | undefined
  /** Leaves argument names as sent (Flow tools: their parameters are snake_case by design). */
  readonly literalArguments?: boolean | undefined
  readonly handler: (args: any, call: CallContext) => Effect.Effect<unknown, ApiFailure, R>
}

/** Declares a tool, keeping its argument types for the handler. */
export const tool = <Shape extends z.ZodRawShape, R>(spec: {
  readonly name: string
  readonly description: string
  readonly input: Shape
  readonly scopes: ReadonlyArray<ApiScope>
  readonly gate?: Gate
  readonly run?: boolean
  readonly signature?: string
  readonly literalArguments?: boolean
  readonly handler: (args: z.infer<z.ZodObject<Shape>>, call: CallContext) => Effect.Effect<unknown, ApiFailure, R>
}): McpTool<R> => spec as McpTool<R>

/** A run's answer with camelCase names (`conversation_id` becomes `conversationId`). */
export const camelReply = <A extends object>(answer: A): Record<string, unknown> =>
  Object.fromEntries(Object.entries(answer).map(([key, value]) => [key === "conversation_id" ? "conversationId" : key, value]))

/**
 * A tool's value as its MCP result: one JSON text (no `structuredContent`: the tools declare no
 * output schema, and a copy would double every answer).
 */
export const valueResult = (value: unknown): CallToolResult => ({ content: [{ type: "text", text: JSON.stringify(value) }] })

/** A failure as an MCP tool error carrying the REST envelope. */
export const errorResult = (error: ApiFailure): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: JSON.stringify(envelopeBody(error)) }]
})

/** The tool result of a finished effect: its value, its expected failure, or `server_error` for a defect. */
export const resultOfExit = (exit: Exit.Exit<unknown, unknown>): { result: CallToolResult; defect: Cause.Cause<unknown> | null } => {
  if (Exit.isSuccess(exit)) return { result: valueResult(exit.value), defect: null }
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some" && isApiFailure(failure.value)) return { result: errorResult(failure.value), defect: null }
  const refusal = nulTextRefusal(exit.cause)
  if (refusal !== null) return { result: errorResult(refusal), defect: null }
  return {
    result: errorResult(new ServerError({ message: "The tool failed on the server; it is safe to retry." })),
    defect: exit.cause
  }
}

/** Runs a tool's effect to its MCP result; never fails (a defect is logged and answered `server_error`). */
export const toolEffect = <R>(effect: Effect.Effect<unknown, ApiFailure, R>, name: string): Effect.Effect<CallToolResult, never, R> =>
  Effect.flatMap(Effect.exit(effect), (exit) => {
    const { result, defect } = resultOfExit(exit)
    return defect === null ? Effect.succeed(result) : Effect.as(Effect.logError(`MCP tool ${name} failed`, defect), result)
  })

/** A page of a service as MCP lists answer it: `{items, nextCursor}`, each item cut to `fields` when given. */
export const itemsPage = <A extends object>(
  page: { readonly items: ReadonlyArray<A>; readonly nextCursor: string | null },
  fields: ReadonlyArray<string> | null | undefined
): { readonly items: ReadonlyArray<Partial<A>>; readonly nextCursor: string | null } => ({
  items: page.items.map((item) => project(item, fields ?? null)),
  nextCursor: page.nextCursor
})
