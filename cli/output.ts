/**
 * Command output: one JSON document with `--json`, ink on a terminal, plain text otherwise.
 * stdout carries data; progress and errors go to stderr.
 */
import type { CliIo } from "./io.js"
import type { CommonOptions } from "./options.js"
import type { Block } from "./ui/blocks.js"
import { renderPlain } from "./ui/plain.js"

/** Whether human output may use ink: stdout is a terminal. */
export const isInteractive = (io: CliIo): boolean => io.stdout.isTTY === true

/** Writes `value` as one JSON document and a newline. */
export const writeJson = (io: CliIo, value: unknown): void => {
  io.stdout.write(`${JSON.stringify(value)}\n`)
}

/** Writes blocks for people: rendered with ink (imported only now) on a terminal, plain otherwise. */
export const writeHuman = async (io: CliIo, blocks: ReadonlyArray<Block>): Promise<void> => {
  if (!isInteractive(io)) {
    io.stdout.write(renderPlain(blocks))
    return
  }
  const { renderBlocks } = await import("./ui/render.js")
  io.stdout.write(renderBlocks(blocks, io.stdout.columns || 80))
}

/** Prints a command's result: `json` with `--json`, else the blocks from `human`. */
export const output = async <T>(
  io: CliIo,
  options: CommonOptions,
  result: T,
  present: { readonly json: (result: T) => unknown; readonly human: (result: T) => ReadonlyArray<Block> }
): Promise<void> => {
  if (options.json) writeJson(io, present.json(result))
  else await writeHuman(io, present.human(result))
}

/** Writes one progress or status line to stderr. */
export const progress = (io: CliIo, line: string): void => {
  io.stderr.write(`${line}\n`)
}
