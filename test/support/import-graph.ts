/**
 * The static import graph of the project's TypeScript sources: what loading a module loads before
 * any of its code runs. `import` and `export ... from` declarations count (an `import { type A }`
 * too: under `verbatimModuleSyntax` it stays an import), `import type` and `export type` do not, nor
 * does a dynamic `import()`, which loads only when the code runs.
 */
import { existsSync, readFileSync } from "node:fs"
import { dirname, relative, resolve } from "node:path"
import ts from "typescript"

/** What a module loads statically, module by module. */
export interface ImportGraph {
  /** Every project file reached (paths relative to the root), each with the file that first imported it ("" for the entry). */
  readonly files: ReadonlyMap<string, string>
  /** Every package (and `node:` module) reached, each with the project file that first imported it. */
  readonly packages: ReadonlyMap<string, string>
}

/** The module specifiers a file loads statically. */
const staticSpecifiers = (file: string): Array<string> => {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS)
  const specifiers: Array<string> = []
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly && ts.isStringLiteral(statement.moduleSpecifier)) {
      specifiers.push(statement.moduleSpecifier.text)
    }
    if (ts.isExportDeclaration(statement) && !statement.isTypeOnly && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      specifiers.push(statement.moduleSpecifier.text)
    }
  }
  return specifiers
}

/** The package a bare specifier names (`effect/Schema` is `effect`, `@effect/sql/SqlError` is `@effect/sql`). */
const packageOf = (specifier: string): string => {
  const parts = specifier.split("/")
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!
}

/** The source file a relative `.js` specifier names (`.ts` or `.tsx` beside it). */
const sourceFileOf = (importer: string, specifier: string): string => {
  const target = resolve(dirname(importer), specifier)
  for (const candidate of [target.replace(/\.js$/, ".ts"), target.replace(/\.js$/, ".tsx"), target]) {
    if (existsSync(candidate)) return candidate
  }
  throw new Error(`${importer}: cannot find ${specifier}`)
}

/** The static import graph from `entry` (a path relative to `root`). */
export const staticImportGraph = (root: string, entry: string): ImportGraph => {
  const files = new Map<string, string>()
  const packages = new Map<string, string>()
  const visit = (file: string, importer: string): void => {
    const name = relative(root, file)
    if (files.has(name)) return
    files.set(name, importer)
    for (const specifier of staticSpecifiers(file)) {
      if (specifier.startsWith(".")) visit(sourceFileOf(file, specifier), name)
      else if (!packages.has(packageOf(specifier))) packages.set(packageOf(specifier), name)
    }
  }
  visit(resolve(root, entry), "")
  return { files, packages }
}

/** The chain of imports from the entry to `file`, for a failure's message. */
export const importChain = (graph: ImportGraph, file: string): string => {
  const chain = [file]
  for (let importer = graph.files.get(file) ?? graph.packages.get(file); importer; importer = graph.files.get(importer)) chain.unshift(importer)
  return chain.join(" -> ")
}
