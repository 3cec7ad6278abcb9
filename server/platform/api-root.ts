/** The API root, `{base_url}` without the host, in a module of its own so code without HTTP (MCP sign-in's addresses) reads it without loading the contract. */
export const apiPrefix = "/api/v1" as const
