/** Which MCP address a request came to: `{mcp_url}` or a workspace's `{base_url}/orgs/<slug>/mcp`. */
export type McpAddress = { readonly kind: "any" } | { readonly kind: "workspace"; readonly slug: string }
