/**
 * Bundles the `svc` command into `dist/cli-bundle/` (run by `npm run build` after tsc; `bin/svc.js`
 * imports its `main.js`). Node 20 has no module compile cache, so loading the CLI from `dist/cli/`
 * parsed every module of effect and the server on each start; one tree-shaken, minified ESM bundle
 * split at the CLI's dynamic `import()`s loads only commander and the command table at start-up,
 * and each command's chunks when it runs (docs/decisions.md, "The CLI ships as a bundle").
 *
 *   node dist/scripts/bundle-cli.js [--metafile FILE]
 *
 * `--metafile FILE` writes esbuild's metafile (what each chunk holds) for inspection.
 */
import { build, type BuildOptions } from "esbuild"
import { rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { deepImportsPlugin } from "./deep-imports.js"

/** The repository root (this file runs from `dist/scripts/`). */
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

/** Where the bundle goes; `bin/svc.js` imports `main.js` from here. */
export const bundleDir = join(root, "dist", "cli-bundle")

/**
 * Packages left to Node's own resolution from `node_modules` at run time: native addons and the
 * optional modules their packages only try to load (better-sqlite3; sqlite-vec, which finds its
 * platform package's loadable extension with `import.meta.resolve`; pg's `pg-native`; ink's
 * `react-devtools-core`; `ws`'s `bufferutil` and `utf-8-validate`; msgpackr's `msgpackr-extract`),
 * and pdfjs-dist, which loads its worker module by path and reads its fonts and CMaps from its
 * own package folder.
 */
export const externalPackages = [
  "better-sqlite3",
  "sqlite-vec",
  "pg-native",
  "react-devtools-core",
  "bufferutil",
  "utf-8-validate",
  "msgpackr-extract",
  "pdfjs-dist"
] as const

/**
 * Bundled CommonJS packages call `require` for Node's built-in modules and the externals; an ES
 * module has none, so every chunk starts by making one.
 */
const requireBanner = 'import { createRequire as __svcCreateRequire } from "node:module"; const require = __svcCreateRequire(import.meta.url);'

/** The esbuild options of the CLI bundle. */
export const bundleOptions: BuildOptions = {
  absWorkingDir: root,
  entryPoints: { main: join(root, "cli", "main.ts") },
  outdir: bundleDir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  // Stack traces and `error.name` of classes that do not set it keep their names.
  keepNames: true,
  legalComments: "eof",
  tsconfig: join(root, "tsconfig.json"),
  external: [...externalPackages],
  banner: { js: requireBanner },
  chunkNames: "chunks/[name]-[hash]",
  plugins: [deepImportsPlugin(root, ["effect", "@effect/platform", "@effect/sql"])],
  logLevel: "warning"
}

/** Builds the bundle afresh; returns esbuild's metafile. */
export const bundleCli = async () => {
  rmSync(bundleDir, { recursive: true, force: true })
  const result = await build({ ...bundleOptions, metafile: true })
  return result.metafile
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({ options: { metafile: { type: "string" } } })
  const metafile = await bundleCli()
  if (values.metafile !== undefined) writeFileSync(values.metafile, JSON.stringify(metafile))
}
