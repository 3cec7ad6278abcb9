/**
 * One MCP connection: an `McpServer` whose tool list follows its caller. Before each request the
 * transport passes on, `refresh` sets the caller (authenticated again for that request) and brings
 * the registered tools in line with what the caller may use now: a role change, other families or
 * a newly published item show on the next request. Tool calls run on the service's runtime with the
 * caller of the request at hand, counted against the key's rate limit like a REST request. The
 * kinds of resource (`resources.ts`, `item-resources.ts`) are registered once; each read and each
 * completion of their templates' variables (`completion/complete`, hence the `completions`
 * capability) is answered for the caller at hand and counted the same way.
 */
import { McpServer, ResourceTemplate, type RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ErrorCode, isJSONRPCRequest, type JSONRPCMessage, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Exit, type Layer, Runtime } from "effect"
import { FeatureNotAvailable, NotFound } from "../platform/errors.js"
import { envelopeBody, isApiFailure } from "../platform/request/error-catalog.js"
import { type AdmissionFailure, admitPrincipal } from "../identity/admission.js"
import type { RateLimiter, RequestRate } from "../platform/rate-limiter.js"
import type * as z from "zod/v4"
import type { CoreServices } from "../core.js"
import type { McpSignInLive } from "./sign-in/feature.js"
import { mapLegacyMessage } from "../mcp-door/names.js"
import { agentResourceKind, appResourceKind, flowResourceKind } from "./item-resources.js"
import { readable, type ResourceKind, type TemplateValues, type VariableCompletion } from "./resource-kind.js"
import { pageResourceKind, sourceResourceKind } from "./resources.js"
import { listFingerprint, toolsFor } from "./registry.js"
import type { FamilyName } from "../mcp-door/family-names.js"
import { type CallContext, type McpTool, toolEffect } from "../mcp-door/tool.js"

/** The services MCP runs on: the server's core and MCP sign-in's (`McpSignInLive`). */
export type McpServices = CoreServices | Layer.Layer.Success<typeof McpSignInLive>

/** The server's name and version as MCP clients see them. */
export const serverInfo = { name: "svc", version: "0.1.0" } as const

const instructions =
  "svc: Agents, Flows, Apps and Knowledgebases as tools. Start with `whoami`; `search_docs` explains the service. Id arguments also take exact names. Pages, sources and published Agents, Flows and Apps are also resources (svc://…), whose ids complete."

/** The refusal of a run on a trial (spec: Availability). */
const runRefused = () =>
  new FeatureNotAvailable({ message: "Runs from a connected client are refused on a free trial until the first payment." })

/** The kinds of resource every connection registers (each offered with its families). */
const resourceKinds: ReadonlyArray<ResourceKind> = [pageResourceKind, sourceResourceKind, agentResourceKind, flowResourceKind, appResourceKind]

/** A failed read or completion as a JSON-RPC error carrying the REST envelope: `not_found` is -32002 (resource not found), others -32600. */
const protocolError = (cause: Cause.Cause<unknown>): McpError => {
  const failure = Cause.failureOption(cause)
  const envelope = failure._tag === "Some" && isApiFailure(failure.value) ? envelopeBody(failure.value) : { error: { code: "server_error", message: "The read failed on the server." } }
  return new McpError(envelope.error.code === "not_found" ? -32002 : ErrorCode.InvalidRequest, `${envelope.error.code}: ${envelope.error.message}`, envelope)
}

/** A connection and the tools registered on it. */
export class McpSession {
  readonly server: McpServer
  private call: CallContext | null = null
  /** The fingerprint of the caller the registered tools were built for. */
  private listedFor: string | null = null
  private readonly registered = new Map<string, { readonly handle: RegisteredTool; readonly tool: McpTool }>()
  /** Tools the caller's scopes admit but an organization gate hides: called, they answer the gate's refusal. */
  private gatedOff = new Map<string, McpTool>()
  /** The families the current caller is offered a tool of, as of the last list built for them. */
  private offeredFamilies: ReadonlySet<FamilyName> | null = null
  /** When the connection last served a request (idle connections are closed). */
  lastUsed = Date.now()

  constructor(
    readonly connectionId: string,
    private readonly runtime: Runtime.Runtime<McpServices>
  ) {
    this.server = new McpServer(serverInfo, { capabilities: { tools: { listChanged: true }, resources: { listChanged: true } }, instructions })
    for (const kind of resourceKinds) this.registerKind(kind)
  }

  /** Registers a kind of resource: its template, listing (when it lists), reads and completions, each for the caller at hand. */
  private registerKind(kind: ResourceKind): void {
    const { list } = kind
    const complete = Object.fromEntries(
      Object.entries(kind.complete).map(([variable, completion]) => [
        variable,
        (value: string, context?: { arguments?: Record<string, string> }) => this.complete(kind, completion, value, context?.arguments ?? {})
      ])
    )
    const listed =
      list === undefined ? undefined : async () => ({ resources: this.call === null || !readable(this.call, kind) ? [] : [...(await this.run(list(this.call)))] })
    this.server.registerResource(
      kind.name,
      new ResourceTemplate(kind.template, { list: listed, complete }),
      { title: kind.title, description: kind.description, mimeType: kind.mimeType },
      async (uri, variables) => {
        const call = this.current()
        const values = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, String(value)]))
        const refused = new NotFound({ message: `${kind.title} resources need the ${kind.families.join(" or ")} family (\`?tools=${kind.families[0]}\`).` })
        const exit = await Runtime.runPromiseExit(this.runtime)(
          Effect.andThen(this.admission(call, kind.operation.scopes, false, kind.operation.gate), readable(call, kind) ? kind.read(call, values) : Effect.fail(refused))
        )
        if (Exit.isSuccess(exit)) return { contents: [{ uri: uri.href, mimeType: kind.mimeType, text: exit.value }] }
        throw protocolError(exit.cause)
      }
    )
  }

  /**
   * Completes a variable of a kind's template for the caller at hand: nothing when the caller may not
   * read that kind (no request counted), else one request of the key's rate, then the ids it may read.
   */
  private async complete(kind: ResourceKind, completion: VariableCompletion, value: string, others: TemplateValues): Promise<Array<string>> {
    const call = this.current()
    if (!readable(call, kind)) return []
    const exit = await Runtime.runPromiseExit(this.runtime)(
      Effect.andThen(this.admission(call, kind.operation.scopes, false, kind.operation.gate), completion(call, value, others))
    )
    if (Exit.isSuccess(exit)) return [...exit.value]
    throw protocolError(exit.cause)
  }

  private current(): CallContext {
    if (this.call === null) throw new McpError(ErrorCode.InternalError, "The connection has no caller yet.")
    return this.offeredFamilies === null ? this.call : { ...this.call, offeredFamilies: this.offeredFamilies }
  }

  private run<A>(effect: Effect.Effect<A, never, McpServices>): Promise<A> {
    return Runtime.runPromise(this.runtime)(effect)
  }

  /** The one admission (`identity/admission.ts`: gate and scopes, then one request of the key's rate), after the trial rule for runs. */
  private admission(call: CallContext, scopes: McpTool["scopes"], run: boolean | undefined, gate?: McpTool["gate"]) {
    const admitted: Effect.Effect<void, AdmissionFailure | FeatureNotAvailable, RateLimiter | RequestRate> =
      run && !call.runsAllowed ? Effect.fail(runRefused()) : Effect.asVoid(admitPrincipal(call.principal, { scopes, gate }))
    return admitted
  }

  /** Calls a tool for the current caller; always a tool result. */
  private invoke(tool: McpTool, args: unknown) {
    const call = this.current()
    return this.run(toolEffect(Effect.andThen(this.admission(call, tool.scopes, tool.run, tool.gate), tool.handler(args ?? {}, call)), tool.name, tool.outputSchema))
  }

  /**
   * Sets the caller of the request at hand and brings the tool list in line with it. `fingerprint`
   * is the caller's `listFingerprint` when the request already read it (with its authentication).
   */
  async refresh(call: CallContext, fingerprint?: string): Promise<void> {
    this.call = call
    this.lastUsed = Date.now()
    if (fingerprint === undefined) fingerprint = await this.run(listFingerprint(call))
    if (fingerprint === this.listedFor) return
    const { offered, gatedOff, offeredFamilies } = await this.run(toolsFor(call))
    this.gatedOff = gatedOff
    this.offeredFamilies = offeredFamilies
    this.listedFor = fingerprint
    for (const [name, entry] of this.registered) {
      const next = offered.get(name)
      if (next === undefined || next.signature !== entry.tool.signature) {
        entry.handle.remove()
        this.registered.delete(name)
      }
    }
    for (const [name, tool] of offered) {
      if (this.registered.has(name)) continue
      const config = { title: tool.title, description: tool.description, inputSchema: tool.input as z.ZodRawShape, ...(tool.hints === undefined ? {} : { annotations: { ...tool.hints } }) }
      const handle = this.server.registerTool(name, config, (args: unknown) => this.invoke(this.registered.get(name)?.tool ?? tool, args))
      this.registered.set(name, { handle, tool })
    }
  }

  /** Whether a registered tool keeps its arguments as sent (no old-spelling mapping). */
  keepsArguments = (name: string): boolean => this.registered.get(name)?.tool.literalArguments === true

  /**
   * Answers a `tools/call` of a tool hidden by a gate with the gate's refusal (through the same
   * admission as a listed tool); true when it did.
   */
  private answerGatedOff(message: JSONRPCMessage, transport: Transport): boolean {
    if (!isJSONRPCRequest(message) || message.method !== "tools/call") return false
    const name = message.params?.["name"]
    const tool = typeof name === "string" && !this.registered.has(name) ? this.gatedOff.get(name) : undefined
    if (tool === undefined) return false
    void this.invoke(tool, message.params?.["arguments"]).then((result) => transport.send({ jsonrpc: "2.0", id: message.id, result })).catch(() => undefined)
    return true
  }

  /**
   * Answers with the JSON-RPC error -32602 (invalid params) what the SDK's `McpServer` would answer
   * as a tool result or an internal error: a `tools/call` of a tool this caller is not offered (nor
   * hidden by a gate), which MCP 2025-11-25 makes a protocol error, and a `tools/list` whose cursor
   * is not a string. True when it answered.
   */
  private answerInvalidParams(message: JSONRPCMessage, transport: Transport): boolean {
    if (!isJSONRPCRequest(message)) return false
    let problem: string | null = null
    if (message.method === "tools/call") {
      const name = message.params?.["name"]
      if (typeof name !== "string") problem = "params.name: the name of a tool is required."
      else if (!this.registered.has(name) && !this.gatedOff.has(name)) problem = `Unknown tool: ${name}. tools/list names the tools this key is offered.`
    } else if (message.method === "tools/list") {
      const cursor = message.params?.["cursor"]
      if (cursor !== undefined && typeof cursor !== "string") problem = "params.cursor: a string, the nextCursor of an earlier page."
    }
    if (problem === null) return false
    void transport.send({ jsonrpc: "2.0", id: message.id, error: { code: ErrorCode.InvalidParams, message: problem } }).catch(() => undefined)
    return true
  }

  /**
   * A `tools/list` answer with each tool's `outputSchema`, the JSON Schema derived from its operations
   * (or declared) as is: `McpServer` takes output schemas as zod only, would publish them converted
   * again, and would check every answer against them on the server (the client checks them).
   */
  private withOutputSchemas(message: JSONRPCMessage): JSONRPCMessage {
    if (!("result" in message) || !Array.isArray((message.result as { tools?: unknown }).tools)) return message
    const tools = (message.result as { tools: Array<{ name: string }> }).tools.map((listed) => {
      const tool = this.registered.get(listed.name)?.tool
      return tool === undefined ? listed : { ...listed, outputSchema: tool.outputSchema }
    })
    return { ...message, result: { ...message.result, tools } }
  }

  /** Connects the server to a transport, mapping old spellings on arrival and adding output schemas to tool lists. */
  async connect(transport: Transport): Promise<void> {
    await this.server.connect(transport)
    const send = transport.send.bind(transport)
    transport.send = (message, options) => send(this.withOutputSchemas(message), options)
    const receive = transport.onmessage
    if (receive) {
      transport.onmessage = (message, extra) => {
        const mapped = mapLegacyMessage(message, this.keepsArguments)
        if (!this.answerInvalidParams(mapped, transport) && !this.answerGatedOff(mapped, transport)) receive(mapped, extra)
      }
    }
  }

  /** Closes the connection. */
  close(): Promise<void> {
    return this.server.close()
  }
}
