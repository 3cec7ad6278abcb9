/**
 * MCP test helpers: a member with a personal key on a test server, and an MCP SDK client connected
 * to one of the server's MCP addresses over Streamable HTTP (a real socket).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { Role } from "../../server/identity/domain.js"
import type { TestServer } from "./server.js"

/** Adds a member with `role` to `org` and creates a personal key for them; returns its secret. */
export const personalKey = async (server: TestServer, email: string, role: Role, org = "default"): Promise<string> => {
  await server.addMember(email, role, org)
  return server.createKey({ org, name: `mcp ${email}`, scopes: "all", personalFor: email })
}

/** A connected MCP client; `close` ends the session. */
export const connect = async (
  server: TestServer,
  key: string,
  options: { path?: string; tools?: string } = {}
): Promise<Client> => {
  const url = new URL(options.path ?? "/mcp", server.origin)
  if (options.tools !== undefined) url.searchParams.set("tools", options.tools)
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } })
  const client = new Client({ name: "svc-test", version: "1.0.0" })
  await client.connect(transport)
  return client
}

/** The names of the tools a client is offered, sorted. */
export const toolNames = async (client: Client): Promise<Array<string>> => (await client.listTools()).tools.map((tool) => tool.name).sort()

/** A text as JSON, or the text itself when it is not JSON (the SDK's own errors). */
const parsed = (text: string): any => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** Calls a tool and returns its parsed JSON text and whether it is an error. */
export const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult
  const text = result.content.find((part) => part.type === "text")
  return { isError: result.isError === true, body: text && text.type === "text" ? parsed(text.text) : undefined }
}
