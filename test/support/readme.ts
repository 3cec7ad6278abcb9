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

/** The marker, on the line before a shell block, of a block the README test does not run: `<!-- readme-test: skip (why) -->`. */
const skipMarker = /^<!--\s*readme-test:\s*skip\s*\((.+)\)\s*-->$/

/** A fenced shell block (` ```sh `) of a markdown text: where it starts, its code, and why it is skipped (null: it runs). */
export interface ShellBlock {
  /** The 1-based line of its opening fence. */
  readonly line: number
  readonly code: string
  readonly skip: string | null
}

/** Every fenced block of `text` with its language and the 1-based line of its opening fence. */
export const fencedBlocksWithLines = (text: string): Array<{ readonly language: string; readonly line: number; readonly code: string }> =>
  [...text.matchAll(/^```([\w-]*)\n([\s\S]*?)^```$/gm)].map((match) => ({
    language: match[1]!,
    line: text.slice(0, match.index).split("\n").length,
    code: match[2]!
  }))

/** The ` ```sh ` blocks of `text` (the README by default), each with its skip reason when the line before its fence (blank lines aside) is the skip marker. */
export const shellBlocks = (text = readme()): Array<ShellBlock> => {
  const lines = text.split("\n")
  return fencedBlocksWithLines(text)
    .filter((block) => block.language === "sh")
    .map((block) => {
      let before = block.line - 2
      while (before >= 0 && lines[before]!.trim() === "") before--
      const marker = before >= 0 ? skipMarker.exec(lines[before]!.trim()) : null
      return { line: block.line, code: block.code, skip: marker ? marker[1]!.trim() : null }
    })
}

/**
 * One command of a shell block and the output shown under it: the command's lines (a line ending
 * in `\` continues it), then the comment lines right under it (no blank line between), each
 * without its `# `. A comment after a blank line, or at the start of a block, is prose.
 */
export interface ShellStep {
  /** The 1-based line of the command within its block. */
  readonly offset: number
  readonly command: string
  readonly shown: ReadonlyArray<string>
}

/** The commands of a shell block, each with the output shown under it. */
export const shellSteps = (code: string): Array<ShellStep> => {
  const lines = code.replace(/\n$/, "").split("\n")
  const steps: Array<{ offset: number; command: string; shown: Array<string> }> = []
  let open = false
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!
    if (line.trim() === "") {
      open = false
      continue
    }
    if (/^\s*#/.test(line)) {
      if (open) steps.at(-1)!.shown.push(line.replace(/^\s*# ?/, ""))
      continue
    }
    const offset = index + 1
    const command = [line]
    while (command.at(-1)!.endsWith("\\") && index + 1 < lines.length) command.push(lines[++index]!)
    steps.push({ offset, command: command.join("\n"), shown: [] })
    open = true
  }
  return steps
}

/** Runs of whitespace made one space, so aligned columns compare as words. */
export const squeezeSpace = (text: string): string => text.replace(/\s+/g, " ")

/**
 * The parts of the shown output a run must print: each shown line cut at every `…` (what differs
 * from run to run), each piece trimmed, whitespace squeezed, pieces shorter than two characters left out.
 */
export const shownFragments = (shown: ReadonlyArray<string>): Array<string> =>
  shown.flatMap((line) => line.split("…").map((piece) => squeezeSpace(piece).trim())).filter((piece) => piece.length >= 2)

/** A link or image of a markdown text, outside code: its target and 1-based line. */
export interface MarkdownLink {
  readonly line: number
  readonly target: string
}

/**
 * Every link and image target of a markdown text (`[text](target)`, `![alt](target)`, reference
 * definitions `[label]: target`, and `href`/`src` of inline HTML), leaving out fenced blocks, inline
 * code and HTML comments.
 */
export const markdownLinks = (text: string): Array<MarkdownLink> => {
  const blank = (match: string) => match.replace(/[^\n]/g, " ")
  const prose = text
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, blank)
    .replace(/<!--[\s\S]*?-->/g, blank)
    .replace(/(`+)[^`]*?\1/g, blank)
  const lineOf = (index: number) => prose.slice(0, index).split("\n").length
  const links: Array<MarkdownLink> = []
  for (const match of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+["'(][^)]*)?\)/g)) links.push({ line: lineOf(match.index), target: match[1]! })
  for (const match of prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) links.push({ line: lineOf(match.index), target: match[1]! })
  for (const match of prose.matchAll(/\b(?:href|src)\s*=\s*["']([^"']+)["']/g)) links.push({ line: lineOf(match.index), target: match[1]! })
  return links.sort((a, b) => a.line - b.line)
}
