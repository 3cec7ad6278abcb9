/**
 * Command output: one JSON document with `--json`, ink on a terminal, plain text otherwise.
 * stdout carries data; progress and errors go to stderr.
 */
import type { Block } from "./ui/blocks.js"
import { renderPlain } from "./ui/plain.js"
import type { CommonOptions } from "./options.js"

/** Whether human output may use ink: stdout is a terminal. */
export const isInteractive = (): boolean => process.stdout.isTTY === true

/** Writes `value` as one JSON document and a newline. */
export const writeJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`)
}

/** Writes blocks for people: rendered with ink (imported only now) on a terminal, plain otherwise. */
export const writeHuman = async (blocks: ReadonlyArray<Block>): Promise<void> => {
  if (!isInteractive()) {
    process.stdout.write(renderPlain(blocks))
    return
  }
  const { renderBlocks } = await import("./ui/render.js")
  process.stdout.write(renderBlocks(blocks, process.stdout.columns || 80))
}

/** Prints a command's result: `json` with `--json`, else the blocks from `human`. */
export const output = async <T>(
  options: CommonOptions,
  result: T,
  present: { readonly json: (result: T) => unknown; readonly human: (result: T) => ReadonlyArray<Block> }
): Promise<void> => {
  if (options.json) writeJson(present.json(result))
  else await writeHuman(present.human(result))
}

/** Writes one progress or status line to stderr. */
export const progress = (line: string): void => {
  process.stderr.write(`${line}\n`)
}
