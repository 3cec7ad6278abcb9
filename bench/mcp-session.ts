/** MCP over Streamable HTTP for the benchmarks: opening a session and a `tools/call` request body. */

/** The MCP protocol version the benchmarks speak. */
export const protocolVersion = "2025-06-18"

/** Opens an MCP session at `mcpUrl` with `key` (initialize, then the initialized notification); answers its id. */
export const openSession = async (mcpUrl: string, key: string): Promise<string> => {
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" }
  const response = await fetch(mcpUrl, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion, capabilities: {}, clientInfo: { name: "bench", version: "1" } } })
  })
  if (response.status !== 200) throw new Error(`initialize answered ${response.status}: ${await response.text()}`)
  await response.text()
  const sessionId = response.headers.get("mcp-session-id")
  if (!sessionId) throw new Error("no session id")
  const sessionHeaders = { ...headers, "mcp-session-id": sessionId, "mcp-protocol-version": protocolVersion }
  await (await fetch(mcpUrl, { method: "POST", headers: sessionHeaders, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) })).text()
  return sessionId
}

/** The JSON-RPC body of a `tools/call` of tool `name` with `args`. */
export const toolCall = (name: string, args: Record<string, unknown>): string =>
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } })
