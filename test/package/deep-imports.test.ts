/**
 * The bundle's rewrite of index imports (`scripts/deep-imports.ts`): `import { Effect, Schema } from
 * "effect"` becomes imports of effect's own modules, read from effect's installed index, so esbuild's
 * split chunks hold only the modules a command reaches.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { readIndexExports, rewriteIndexImports } from "../../scripts/deep-imports.js"
import { repoRoot } from "../cli/helpers.js"

const effectIndex = readIndexExports(
  readFileSync(join(dirname(createRequire(join(repoRoot, "package.json")).resolve("effect/package.json")), "dist", "esm", "index.js"), "utf8")
)

describe("scripts/deep-imports.ts", () => {
  it("reads effect's index: its modules as namespaces, its plain exports with their module", () => {
    expect(effectIndex.get("Effect")).toEqual({ subpath: "Effect", name: undefined })
    expect(effectIndex.get("Schema")).toEqual({ subpath: "Schema", name: undefined })
    expect(effectIndex.get("pipe")).toEqual({ subpath: "Function", name: "pipe" })
  })

  it("rewrites value imports to the modules, drops type specifiers, keeps aliases and the line count", () => {
    const source = 'import {\n  Effect,\n  type Layer,\n  Schema as S,\n  pipe\n} from "effect"\nconst x = 1\n'
    const rewritten = rewriteIndexImports(source, "effect", effectIndex)
    expect(rewritten).toBe(
      'import * as Effect from "effect/Effect"; import * as S from "effect/Schema"; import { pipe as pipe } from "effect/Function";\n\n\n\n\n\nconst x = 1\n'
    )
    expect(rewritten.split("\n").length).toBe(source.split("\n").length)
  })

  it("leaves `import type` and other packages alone, and keeps a name the index does not know on the index", () => {
    const source = 'import type { Effect } from "effect"\nimport { Effect as E, NotInEffect } from "effect"\nimport { SqlClient } from "@effect/sql"\n'
    expect(rewriteIndexImports(source, "effect", effectIndex)).toBe(
      'import type { Effect } from "effect"\nimport * as E from "effect/Effect"; import { NotInEffect } from "effect";\nimport { SqlClient } from "@effect/sql"\n'
    )
  })
})
