/**
 * An esbuild plugin for the CLI bundle (`bundle-cli.ts`): rewrites the project's imports of a
 * package's index (`import { Effect, Schema } from "effect"`) into imports of the modules the index
 * re-exports (`import * as Effect from "effect/Effect"`, ...). esbuild splits code by file: every
 * file reachable from a chunk's imports goes into a chunk it loads, so one import of effect's index
 * made each command load every effect module any command uses. Through the modules themselves, a
 * command loads only the files it reaches.
 *
 * Only the project's own TypeScript is rewritten; the packages' own files import modules already.
 */
import type { PartialMessage, Plugin } from "esbuild"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, relative, sep } from "node:path"

/** Where each name a package's index exports comes from: the module's subpath and, for a plain export, its name there. */
type IndexExports = ReadonlyMap<string, { readonly subpath: string; readonly name: string | undefined }>

/**
 * Reads a package's ES module index: `export * as Name from "./Name.js"` (a namespace; its name is
 * undefined) and `export { a, b } from "./Module.js"` (plain exports).
 */
export const readIndexExports = (indexSource: string): IndexExports => {
  const exports = new Map<string, { subpath: string; name: string | undefined }>()
  // The index documents each export in a comment, inside the braces too.
  const source = indexSource.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")
  for (const match of source.matchAll(/export\s+\*\s+as\s+(\w+)\s+from\s+"\.\/([\w/]+)\.js"/g)) {
    exports.set(match[1]!, { subpath: match[2]!, name: undefined })
  }
  for (const match of source.matchAll(/export\s*\{([^}]*)\}\s*from\s*"\.\/([\w/]+)\.js"/g)) {
    for (const specifier of match[1]!.split(",").map((part) => part.trim()).filter((part) => part !== "")) {
      const [name, alias] = specifier.split(/\s+as\s+/)
      exports.set((alias ?? name)!, { subpath: match[2]!, name: name! })
    }
  }
  return exports
}

/** A value import of `pkg`'s index (`import { A, B } from "pkg"`; not `import type`), its braces captured. */
const indexImport = (pkg: string): RegExp => {
  const quoted = pkg.replace(/[/\\^$*+?.()|[\]{}]/g, "\\$&")
  return new RegExp(`import\\s*\\{([^}]*)\\}\\s*from\\s*["']${quoted}["'];?`, "g")
}

/** One specifier of an import's braces: `Name`, `Name as local`, or a `type` one (dropped: esbuild erases it). */
const parseSpecifier = (text: string): { readonly imported: string; readonly local: string } | undefined => {
  const specifier = text.trim()
  if (specifier === "" || /^type\s/.test(specifier)) return undefined
  const [imported, local] = specifier.split(/\s+as\s+/)
  return { imported: imported!, local: (local ?? imported)! }
}

/**
 * Rewrites the value imports of `pkg`'s index in `source` into imports of its modules; a name the
 * index map does not know keeps its import of the index. `import type` lines are left as they are.
 */
export const rewriteIndexImports = (source: string, pkg: string, exports: IndexExports): string =>
  source.replace(indexImport(pkg), (statement, braces: string) => {
    const lines: Array<string> = []
    const kept: Array<string> = []
    for (const specifier of braces.split(",").map(parseSpecifier)) {
      if (specifier === undefined) continue
      const origin = exports.get(specifier.imported)
      if (origin === undefined) kept.push(specifier.imported === specifier.local ? specifier.imported : `${specifier.imported} as ${specifier.local}`)
      else if (origin.name === undefined) lines.push(`import * as ${specifier.local} from "${pkg}/${origin.subpath}";`)
      else lines.push(`import { ${origin.name} as ${specifier.local} } from "${pkg}/${origin.subpath}";`)
    }
    if (kept.length > 0) lines.push(`import { ${kept.join(", ")} } from "${pkg}";`)
    // The statement's line count is kept, so esbuild's messages point at the right lines.
    const newlines = statement.split("\n").length - 1
    return lines.join(" ") + "\n".repeat(newlines)
  })

/** The index exports of `pkg`, resolved from `root` (its ES module `index.js`). */
const indexExportsOf = (root: string, pkg: string): IndexExports => {
  const require = createRequire(join(root, "package.json"))
  const packageFolder = dirname(require.resolve(`${pkg}/package.json`))
  return readIndexExports(readFileSync(join(packageFolder, "dist", "esm", "index.js"), "utf8"))
}

/** The plugin: rewrites imports of each of `packages`' index in the TypeScript files under `root` outside `node_modules`. */
export const deepImportsPlugin = (root: string, packages: ReadonlyArray<string>): Plugin => ({
  name: "deep-imports",
  setup(build) {
    const indexes = packages.map((pkg) => ({ pkg, exports: indexExportsOf(root, pkg) }))
    build.onLoad({ filter: /\.tsx?$/ }, (args) => {
      const path = relative(root, args.path)
      if (path.startsWith("..") || path.split(sep).includes("node_modules")) return undefined
      let contents = readFileSync(args.path, "utf8")
      const warnings: Array<PartialMessage> = []
      for (const { pkg, exports } of indexes) {
        contents = rewriteIndexImports(contents, pkg, exports)
        if (indexImport(pkg).test(contents)) warnings.push({ text: `${path} still imports ${pkg}'s index (a name its index map does not know): its chunks hold every module of ${pkg} any command uses` })
      }
      return { contents, loader: args.path.endsWith(".tsx") ? "tsx" : "ts", warnings }
    })
  }
})
