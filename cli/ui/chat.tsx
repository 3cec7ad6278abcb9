/**
 * The ink chat of `svc chat` on a terminal: the transcript, the reply streaming in (a spinner until
 * its first text, then the raw text without control characters), drawn from its markdown once complete (`marked-terminal`,
 * loaded in the background when the chat starts), and an input line (Enter sends, an empty line or
 * Ctrl+C/Ctrl+D ends). Imported lazily.
 */
import { Box, render, Text, useApp, useInput } from "ink"
import { Writable } from "node:stream"
import { useEffect, useState } from "react"
import type { ChatView } from "../chat/view.js"
import type { ChatReply } from "../chat/target.js"
import { describe } from "../errors.js"
import type { CliIo } from "../io.js"

const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/** One line of the transcript. */
interface Entry {
  readonly who: "you" | "greeting" | "reply" | "tool" | "error"
  readonly text: string
}

/** Control characters but tab and newline: a reply's own escape sequences never reach the terminal. */
const controlCharacters = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/** `text` without control characters. */
const printable = (text: string): string => text.replace(controlCharacters, "")

/** A finished reply's markdown as the terminal shows it. */
type DrawReply = (markdown: string) => Promise<string>

/** What the chat needs of its session. */
interface Session {
  readonly send: (message: string, view: ChatView) => Promise<ChatReply>
  readonly conversation: () => string | undefined
}

const Spinner = () => {
  const [tick, setTick] = useState(0)
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), 80)
    return () => clearInterval(timer)
  }, [])
  return <Text color="cyan">{frames[tick % frames.length]} thinking</Text>
}

/** Colours of the transcript's lines; a reply keeps the colours of its drawn markdown. */
const entryColor = { you: "green", greeting: "cyan", tool: "gray", error: "red" } as const

const Chat = ({
  session,
  first,
  drawReply,
  onDone
}: {
  session: Session
  first: string | undefined
  drawReply: DrawReply
  onDone: (error?: unknown) => void
}) => {
  const app = useApp()
  const [entries, setEntries] = useState<ReadonlyArray<Entry>>([])
  const [streaming, setStreaming] = useState<string | null>(null)
  const [input, setInput] = useState("")
  const [busy, setBusy] = useState(false)
  const [ended, setEnded] = useState(false)

  /** Ends the chat once the last state is drawn. */
  const finish = (error?: unknown) => {
    onDone(error)
    setEnded(true)
  }
  useEffect(() => {
    if (ended) app.exit()
  }, [ended])

  const send = (message: string) => {
    setBusy(true)
    setEntries((all) => [...all, { who: "you", text: message }])
    setStreaming("")
    let text = ""
    const view: ChatView = {
      event: (event) => {
        if (event.type === "delta") {
          text += event.text
          setStreaming(printable(text))
        } else if (event.type === "tool") setEntries((all) => [...all, { who: "tool", text: `using ${event.name}` }])
      },
      failed: () => undefined
    }
    session.send(message, view).then(
      async (answer) => {
        const drawn = await drawReply(answer.reply)
        setStreaming(null)
        const greeting: ReadonlyArray<Entry> = typeof answer.greeting === "string" ? [{ who: "greeting", text: answer.greeting }] : []
        setEntries((all) => [...all, ...greeting, { who: "reply", text: drawn }])
        setBusy(false)
        if (first !== undefined) finish()
      },
      (error: unknown) => {
        setStreaming(null)
        setEntries((all) => [...all, { who: "error", text: describe(error) }])
        setBusy(false)
        if (first !== undefined) finish(error)
      }
    )
  }

  useEffect(() => {
    if (first !== undefined) send(first)
  }, [])

  useInput(
    (typed, key) => {
      if ((key.ctrl && (typed === "c" || typed === "d")) || (key.return && input.trim() === "")) return finish()
      if (key.return) {
        const message = input
        setInput("")
        send(message)
      } else if (key.backspace || key.delete) setInput((text) => text.slice(0, -1))
      else if (!key.ctrl && !key.meta) setInput((text) => text + typed)
    },
    { isActive: first === undefined && !busy }
  )

  return (
    <Box flexDirection="column">
      {entries.map((entry, i) => (
        <Text key={i} {...(entry.who === "reply" ? {} : { color: entryColor[entry.who] })}>
          {entry.who === "you" ? "› " : entry.who === "tool" ? "  · " : ""}
          {entry.text}
        </Text>
      ))}
      {streaming === "" ? <Spinner /> : streaming !== null ? <Text>{streaming}</Text> : null}
      {first === undefined && !busy ? (
        <Text>
          <Text color="green">› </Text>
          {input}
          <Text inverse> </Text>
          {input === "" && entries.length === 0 ? <Text dimColor> type a message, Enter sends; an empty line ends</Text> : null}
        </Text>
      ) : null}
      {session.conversation() !== undefined && first === undefined && !busy ? (
        <Text dimColor>conversation {session.conversation()}</Text>
      ) : null}
    </Box>
  )
}

/** A terminal stream over the injected stdout (which may be a wrapper holding only `write`). */
const terminalOf = (io: CliIo): NodeJS.WriteStream => {
  const stream = new Writable({
    write: (chunk: Buffer | string, _encoding, done) => {
      io.stdout.write(chunk.toString())
      done()
    }
  })
  return Object.assign(stream, { isTTY: true, columns: io.stdout.columns || 80, rows: 24 }) as unknown as NodeJS.WriteStream
}

/**
 * Draws replies with `marked-terminal`, loaded now in the background (a large module); a reply is
 * shown raw (without control characters) if it cannot be drawn.
 */
const replyDrawer = (io: CliIo): DrawReply => {
  const loading = import("../chat/terminal-markdown.js")
  loading.catch(() => undefined)
  return (markdown) =>
    loading.then(
      ({ renderTerminalMarkdown, colorAllowed }) => {
        try {
          return renderTerminalMarkdown(markdown, { columns: io.stdout.columns || 80, color: colorAllowed(io.env) })
        } catch {
          return printable(markdown)
        }
      },
      () => printable(markdown)
    )
}

/** Runs the chat on the terminal until the user ends it (or, with `first`, after that one turn); rejects with a turn's failure in the one-turn mode. */
export const runInkChat = async (io: CliIo, session: Session, first: string | undefined): Promise<void> => {
  const drawReply = replyDrawer(io)
  let failure: unknown
  let failed = false
  const instance = render(
    <Chat
      session={session}
      first={first}
      drawReply={drawReply}
      onDone={(error) => {
        if (error !== undefined) {
          failed = true
          failure = error
        }
      }}
    />,
    { stdout: terminalOf(io), stdin: io.stdin as NodeJS.ReadStream, patchConsole: false, exitOnCtrlC: false }
  )
  const stopListening = io.onStop(() => instance.unmount())
  try {
    await instance.waitUntilExit()
  } finally {
    stopListening()
  }
  if (failed) throw failure
}
