/**
 * What the CLI and administration load before any code runs (issue 20, docs/performance.md "CLI
 * start-up"): the CLI's start-up (`cli/main.ts`, then `cli/program.ts`: every command's definition)
 * loads commander, Node's own modules and small constant modules only, everything heavy waiting for a command's dynamic
 * `import()`; administration (`server/admin.ts`, `server/admin-base.ts`) loads services only,
 * never a contract, a handler, the fast lane, the router or MCP's HTTP side.
 */
import { describe, expect, it } from "vitest"
import { importChain, staticImportGraph } from "../support/import-graph.js"
import { repoRoot } from "./helpers.js"

/** Project files outside `cli/` the start-up may load: plain constant lists and file checks, without effect. */
const startUpServerModules = ["server/identity/allowed-values.ts", "server/platform/sql/database-file.ts"]

/** Whether a project file is an HTTP module: a feature's contract or handlers, the HTTP platform, the registry of features, or MCP's HTTP side. */
const isHttpModule = (file: string): boolean =>
  /(^|\/)(http|api)\.ts$/.test(file) ||
  file.startsWith("server/http/") ||
  /(^|\/)(fast-lane|router)[^/]*\.ts$/.test(file) ||
  file === "server/features.ts" ||
  file === "server/server.ts"

describe("the CLI's start-up", () => {
  // `cli/main.ts` answers `--version` itself, then loads `cli/program.ts` (every command's definition) for anything else.
  const graphs = ["cli/main.ts", "cli/program.ts"].map((entry) => staticImportGraph(repoRoot, entry))

  it("loads commander and Node's modules, no other package (effect, ink, react, the SDK's dependencies)", () => {
    for (const graph of graphs) {
      const others = [...graph.packages.keys()].filter((pkg) => pkg !== "commander" && !pkg.startsWith("node:"))
      expect(others.map((pkg) => importChain(graph, pkg))).toEqual([])
    }
  })

  it("loads the CLI's own modules and small constant modules only (no server module, no SDK)", () => {
    for (const graph of graphs) {
      const outside = [...graph.files.keys()].filter((file) => !file.startsWith("cli/") && !startUpServerModules.includes(file))
      expect(outside.map((file) => importChain(graph, file))).toEqual([])
    }
    expect(graphs[1]!.files.has("cli/commands/orgs.ts")).toBe(true)
  })

  it("answers --version before the program loads: cli/main.ts does not load cli/program.ts", () => {
    expect(graphs[0]!.files.has("cli/program.ts")).toBe(false)
  })
})

describe("administration", () => {
  for (const entry of ["server/admin.ts", "server/admin-base.ts"]) {
    it(`${entry} loads services only: no contract, handler, fast lane, router or MCP HTTP module`, () => {
      const graph = staticImportGraph(repoRoot, entry)
      const http = [...graph.files.keys()].filter(isHttpModule)
      expect(http.map((file) => importChain(graph, file))).toEqual([])
      expect(graph.packages.has("@effect/platform-node")).toBe(false)
    })
  }

  it("server/admin.ts reaches every feature's services", () => {
    const graph = staticImportGraph(repoRoot, "server/admin.ts")
    for (const file of ["server/feature-services.ts", "server/knowledge/sources/service.ts", "server/runtime/runs/service.ts", "server/identity/mcp-sign-in/sessions.ts"]) {
      expect(graph.files.has(file)).toBe(true)
    }
  })

  it("feature-services.ts lists the services of exactly the features the registry has, in its order", async () => {
    const [{ features }, { featureServices }] = await Promise.all([import("../../server/features.js"), import("../../server/feature-services.js")])
    expect(Object.keys(featureServices)).toEqual(features.map((feature) => feature.name))
  })

  it("the check itself sees HTTP modules: the server's registry of features reaches them", () => {
    const graph = staticImportGraph(repoRoot, "server/features.ts")
    expect([...graph.files.keys()].filter(isHttpModule).length).toBeGreaterThan(10)
  })
})
