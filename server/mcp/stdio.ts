/**
 * `svc mcp` over stdio: the MCP server in this process on a data directory (the same session, tools
 * and rules as over HTTP; the key is authenticated again before every message, so a role change or
 * a revoked key shows on the next one), or a bridge from stdio to a running server's MCP address.
 * Only protocol goes to `output`; anything else belongs on stderr.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { isJSONRPCRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import type { Readable, Writable } from "node:stream"
import { syncDataVersion } from "../http/data-version-sync.js"
import { isApiFailure } from "../platform/request/error-catalog.js"
import { authenticateMcp, runsAllowedFor } from "./auth.js"
import type { FamilyName } from "./families.js"
import { McpSession, type McpServices } from "./session.js"

/** JSON-RPC error code of a refused connection (outside the spec's reserved range). */
export const refusedCode = -32001

/** Answers a request that could not be served with a JSON-RPC error (notifications get none). */
const refuse = (transport: Transport, message: JSONRPCMessage, text: string, data?: unknown) =>
  isJSONRPCRequest(message) ? transport.send({ jsonrpc: "2.0", id: message.id, error: { code: refusedCode, message: text, ...(data === undefined ? {} : { data }) } }) : Promise.resolve()

/** Resolves once `transport` closes. */
const closed = (transport: Transport) =>
  new Promise<void>((resolve) => {
    const previous = transport.onclose
    transport.onclose = () => {
      previous?.()
      resolve()
    }
  })

/** Serves MCP on `input`/`output` in this process for the holder of `apiKey`; resolves when the input ends. */
export const serveStdioInProcess = async (options: {
  readonly runtime: Runtime.Runtime<McpServices>
  readonly apiKey: string
  readonly families: ReadonlySet<FamilyName>
  readonly input: Readable
  readonly output: Writable
}): Promise<void> => {
  // As every door: the data version first (PostgreSQL: commits of other processes, such as a role
  // changed by the CLI, show on the very next request), then the caller.
  const authenticate = () =>
    Runtime.runPromise(options.runtime)(Effect.either(Effect.zipRight(syncDataVersion, authenticateMcp(`Bearer ${options.apiKey}`, { kind: "any" }))))
  const first = await authenticate()
  if (first._tag === "Left") throw first.left
  const session = new McpSession(`mcp_${randomUUID().replace(/-/g, "")}`, options.runtime)
  const callOf = (principal: typeof first.right) => ({
    principal: { ...principal, connectionId: session.connectionId },
    families: options.families,
    runsAllowed: runsAllowedFor(principal)
  })
  await session.refresh(callOf(first.right))
  const transport = new StdioServerTransport(options.input, options.output)
  const done = closed(transport)
  await session.connect(transport)
  const receive = transport.onmessage!
  let queue: Promise<void> = Promise.resolve()
  transport.onmessage = (message: JSONRPCMessage) => {
    queue = queue.then(async () => {
      const principal = await authenticate()
      if (principal._tag === "Left") {
        const error = principal.left
        return refuse(transport, message, `${error.code}: ${error.message}`, isApiFailure(error) ? { error: { code: error.code, message: error.message } } : undefined)
      }
      await session.refresh(callOf(principal.right))
      receive(message)
    })
  }
  options.input.once("end", () => void transport.close())
  await done
  await session.close().catch(() => undefined)
}

/** Bridges MCP on `input`/`output` to the Streamable HTTP address `url`; resolves when the input ends. */
export const bridgeStdioToHttp = async (options: {
  readonly url: URL
  readonly apiKey: string
  readonly input: Readable
  readonly output: Writable
  readonly log: (line: string) => void
}): Promise<void> => {
  const local = new StdioServerTransport(options.input, options.output)
  const remote = new StreamableHTTPClientTransport(options.url, { requestInit: { headers: { authorization: `Bearer ${options.apiKey}` } } })
  const done = closed(local)
  remote.onmessage = (message) => void local.send(message)
  remote.onerror = (error) => options.log(`svc mcp: ${error.message}`)
  local.onmessage = (message) => {
    remote.send(message).catch((error: Error) => {
      options.log(`svc mcp: ${error.message}`)
      void refuse(local, message, error.message)
    })
  }
  await remote.start()
  await local.start()
  options.input.once("end", () => void local.close())
  await done
  await remote.terminateSession().catch(() => undefined)
  await remote.close()
}
