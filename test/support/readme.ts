/**
 * The README as tests read it: its SDK snippet (compiled and run by the package test) and its
 * fenced shell blocks (run by the README test), so what it shows is what is proved.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { repoRoot } from "../cli/helpers.js"

/** The README's text. */
export const readme = (): string => readFileSync(join(repoRoot, "README.md"), "utf8")

/** Every fenced block of the README in `language`, in order. */
export const fencedBlocks = (language: string, text = readme()): Array<string> =>
  [...text.matchAll(/^```([\w-]*)\n([\s\S]*?)^```$/gm)].filter((match) => match[1] === language).map((match) => match[2]!)

/** The README's SDK snippet: the TypeScript block that constructs the client from `svc-local/sdk`. */
export const readmeSdkSnippet = (): string => {
  const snippet = fencedBlocks("ts").find((block) => block.includes('from "svc-local/sdk"') && block.includes("new Svc("))
  if (snippet === undefined) throw new Error("the README has no SDK snippet (a ts block importing svc-local/sdk that makes a Svc)")
  return snippet
}
