/**
 * Progress of long commands, on stderr: a live ink view (progress bar, spinner) on a terminal, plain
 * lines otherwise. stdout stays for the command's result.
 */
import type { CliIo } from "./io.js"
import type { CommonOptions } from "./options.js"
import { isInteractive } from "./output.js"
import { byteSize, type Tone } from "./ui/blocks.js"
import type { ProgressView } from "./ui/progress-view.js"

/** What a long command reports as it goes. */
export interface Progress {
  /** Bytes of `label` sent so far, of `total`. */
  readonly upload: (label: string, sent: number, total: number) => void
  /** Something still going on (a spinner on a terminal); a plain line only when `text` changes. */
  readonly wait: (text: string) => void
  /** A finished step. */
  readonly step: (text: string, tone?: Tone) => void
  /** Stops the live view (what was shown stays); call before printing the result or an error. */
  readonly stop: () => void
}

/** Plain progress lines; an upload prints at most one line a second (`now` is for tests). */
export const plainProgress = (write: (line: string) => void, now: () => number = Date.now): Progress => {
  let lastUpload = -Infinity
  let lastWait: string | null = null
  return {
    upload: (label, sent, total) => {
      if (sent === 0) {
        lastUpload = now()
        write(`uploading ${label}`)
      } else if (sent < total && now() - lastUpload >= 1000) {
        lastUpload = now()
        write(`uploading ${label}: ${Math.floor((sent / total) * 100)}% (${byteSize(sent)} of ${byteSize(total)})`)
      }
    },
    wait: (text) => {
      if (text !== lastWait) write(text)
      lastWait = text
    },
    step: (text) => {
      lastWait = null
      write(text)
    },
    stop: () => undefined
  }
}

/** A live ink view on `stderr`, a terminal (ink is imported only now). */
const liveProgress = async (stderr: NodeJS.WriteStream): Promise<Progress> => {
  const { renderProgress } = await import("./ui/progress.js")
  let view: ProgressView = { steps: [], current: null }
  const live = renderProgress(view, stderr)
  let stopped = false
  const show = (next: ProgressView) => {
    view = next
    if (!stopped) live.update(view)
  }
  return {
    upload: (label, sent, total) => show({ ...view, current: { kind: "upload", label, sent, total } }),
    wait: (text) =>
      show({ ...view, current: { kind: "wait", text, since: view.current?.kind === "wait" ? view.current.since : Date.now() } }),
    step: (text, tone = "success") => show({ steps: [...view.steps, { text, tone }], current: null }),
    stop: () => {
      if (stopped) return
      show({ ...view, current: null })
      stopped = true
      live.stop()
    }
  }
}

/** Reports nothing. */
const silent: Progress = { upload: () => undefined, wait: () => undefined, step: () => undefined, stop: () => undefined }

/**
 * The progress of a command: live on a terminal (stdout and stderr both), plain lines on stderr
 * otherwise, and nothing with `--json` off a terminal (scripts get the document and, on failure, the error line).
 */
export const startProgress = async (io: CliIo, options: CommonOptions): Promise<Progress> => {
  // Only the real process's terminal streams report isTTY, so stderr is then a tty.WriteStream.
  if (isInteractive(io) && io.stderr.isTTY === true) return liveProgress(io.stderr as NodeJS.WriteStream)
  if (options.json) return silent
  return plainProgress((line) => io.stderr.write(`${line}\n`))
}
