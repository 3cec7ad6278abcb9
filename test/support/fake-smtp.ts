/**
 * A tiny SMTP server on a real socket for tests: it speaks the real dialogue (greeting, EHLO with
 * AUTH PLAIN/LOGIN, MAIL, RCPT, DATA with dot-stuffing, QUIT), records each message and the
 * credentials used, and refuses recipients whose address contains `bounce` with 550.
 */
import { createServer, type Socket } from "node:net"

/** A message the fake server accepted. */
export interface ReceivedMail {
  readonly from: string
  readonly to: ReadonlyArray<string>
  /** The raw message (headers and body) as sent after DATA. */
  readonly data: string
  /** `user:pass` from AUTH, or null. */
  readonly auth: string | null
}

/** A running fake SMTP server. */
export interface FakeSmtp {
  readonly port: number
  readonly received: Array<ReceivedMail>
  readonly close: () => Promise<void>
}

const decode = (b64: string) => Buffer.from(b64, "base64").toString()

/** Starts the fake SMTP server on an ephemeral loopback port. */
export const startFakeSmtp = async (): Promise<FakeSmtp> => {
  const received: Array<ReceivedMail> = []
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => undefined)
    let buffer = ""
    let mode: "command" | "data" | "auth-plain" | "auth-user" | "auth-pass" = "command"
    let from = ""
    let to: Array<string> = []
    let data: Array<string> = []
    let auth: string | null = null
    let user = ""
    const reply = (line: string) => socket.write(`${line}\r\n`)
    const onLine = (line: string) => {
      if (mode === "data") {
        if (line === ".") {
          received.push({ from, to, data: data.join("\r\n"), auth })
          mode = "command"
          from = ""
          to = []
          data = []
          return reply("250 2.0.0 queued")
        }
        data.push(line.startsWith("..") ? line.slice(1) : line)
        return
      }
      if (mode === "auth-plain") {
        auth = decode(line).split("\u0000").slice(1).join(":")
        mode = "command"
        return reply("235 2.7.0 authenticated")
      }
      if (mode === "auth-user") {
        user = decode(line)
        mode = "auth-pass"
        return reply("334 UGFzc3dvcmQ6")
      }
      if (mode === "auth-pass") {
        auth = `${user}:${decode(line)}`
        mode = "command"
        return reply("235 2.7.0 authenticated")
      }
      const [verb = "", ...rest] = line.split(" ")
      const argument = rest.join(" ")
      switch (verb.toUpperCase()) {
        case "EHLO":
          socket.write("250-fake-smtp greets you\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n")
          return
        case "HELO":
          return reply("250 fake-smtp")
        case "AUTH": {
          const [mechanism, initial] = argument.split(" ")
          if (mechanism?.toUpperCase() === "PLAIN") {
            if (initial) {
              auth = decode(initial).split("\u0000").slice(1).join(":")
              return reply("235 2.7.0 authenticated")
            }
            mode = "auth-plain"
            return reply("334 ")
          }
          mode = "auth-user"
          return reply("334 VXNlcm5hbWU6")
        }
        case "MAIL":
          from = argument.replace(/^FROM:\s*/i, "").replace(/[<>]/g, "").split(" ")[0] ?? ""
          return reply("250 2.1.0 ok")
        case "RCPT": {
          const address = argument.replace(/^TO:\s*/i, "").replace(/[<>]/g, "")
          if (address.includes("bounce")) return reply("550 5.1.1 no such mailbox")
          to.push(address)
          return reply("250 2.1.5 ok")
        }
        case "DATA":
          mode = "data"
          return reply("354 end data with <CR><LF>.<CR><LF>")
        case "RSET":
          from = ""
          to = []
          return reply("250 2.0.0 ok")
        case "NOOP":
          return reply("250 2.0.0 ok")
        case "QUIT":
          reply("221 2.0.0 bye")
          socket.end()
          return
        default:
          return reply("502 5.5.2 command not recognized")
      }
    }
    socket.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8")
      for (let end = buffer.indexOf("\r\n"); end !== -1; end = buffer.indexOf("\r\n")) {
        const line = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        onLine(line)
      }
    })
    reply("220 fake-smtp ESMTP ready")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
