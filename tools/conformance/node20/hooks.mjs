// Module resolution hook: when the MCP conformance CLI imports `fs` on a Node without
// fs.globSync, hand it fs-with-glob.mjs instead. Every other import resolves as usual.
import * as fs from "node:fs"

const shim = new URL("./fs-with-glob.mjs", import.meta.url).href

/** Resolves `fs`/`node:fs` for files of @modelcontextprotocol/conformance to the shim on Node 20. */
export const resolve = async (specifier, context, next) => {
  const fromConformance = context.parentURL?.includes("/@modelcontextprotocol/conformance/") === true
  if (!("globSync" in fs) && fromConformance && (specifier === "fs" || specifier === "node:fs")) {
    return { url: shim, shortCircuit: true }
  }
  return next(specifier, context)
}
