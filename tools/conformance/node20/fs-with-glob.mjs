// node:fs as the MCP conformance CLI imports it on Node 20, which has no fs.globSync (Node 22
// added it). Only the CLI's `tier-check` command calls it; the server scenarios never do.
export * from "node:fs"
export { default } from "node:fs"

/** Stands in for Node 22's fs.globSync: fails loudly if anything ever calls it. */
export const globSync = () => {
  throw new Error("fs.globSync needs Node 22: the conformance CLI's tier-check command does not run on Node 20")
}
