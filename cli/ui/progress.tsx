/** The live progress view with ink: finished steps, an upload's progress bar, a spinner. Imported lazily. */
import { Box, render, Text } from "ink"
import { useEffect, useState } from "react"
import { byteSize, type Tone } from "./blocks.js"
import type { ProgressView } from "./progress-view.js"

const toneColor: Record<Tone, string> = { success: "green", warning: "yellow", info: "cyan" }
const toneMark: Record<Tone, string> = { success: "✔", warning: "✖", info: "●" }
const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
const barWidth = 30

/** A bar of `barWidth` cells for a fraction from 0 to 1. */
export const bar = (fraction: number): string => {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * barWidth)
  return "█".repeat(filled) + "░".repeat(barWidth - filled)
}

const Spinner = ({ text, since }: { text: string; since: number }) => {
  const [tick, setTick] = useState(0)
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), 80)
    return () => clearInterval(timer)
  }, [])
  const seconds = Math.floor((Date.now() - since) / 1000)
  return (
    <Text>
      <Text color="cyan">{frames[tick % frames.length]} </Text>
      {text}
      <Text dimColor>{seconds > 0 ? ` ${seconds}s` : ""}</Text>
    </Text>
  )
}

/** The whole view. */
export const ProgressViewer = ({ view }: { view: ProgressView }) => {
  const current = view.current
  return (
    <Box flexDirection="column">
      {view.steps.map((step, i) => (
        <Text key={i}>
          <Text color={toneColor[step.tone]}>{toneMark[step.tone]} </Text>
          {step.text}
        </Text>
      ))}
      {current?.kind === "upload" ? (
        <Text>
          {`uploading ${current.label} `}
          <Text color="cyan">{bar(current.total === 0 ? 1 : current.sent / current.total)}</Text>
          {` ${current.total === 0 ? 100 : Math.floor((current.sent / current.total) * 100)}% `}
          <Text dimColor>{`${byteSize(current.sent)} / ${byteSize(current.total)}`}</Text>
        </Text>
      ) : current?.kind === "wait" ? (
        <Spinner text={current.text} since={current.since} />
      ) : null}
    </Box>
  )
}

/** Renders the view live on `stream`; `update` redraws it, `stop` leaves the last frame and lets go of the terminal. */
export const renderProgress = (view: ProgressView, stream: NodeJS.WriteStream) => {
  const instance = render(<ProgressViewer view={view} />, { stdout: stream, patchConsole: false, exitOnCtrlC: false })
  return {
    update: (next: ProgressView) => instance.rerender(<ProgressViewer view={next} />),
    stop: () => {
      instance.unmount()
      instance.cleanup()
    }
  }
}
