/**
 * `svc chat` draws a reply's markdown on a terminal (issue 21): bold, italics and headings as
 * escape codes, no markdown marker left once the reply is complete (it streams in raw), links as
 * `text (address)`, and no escape sequence the reply itself carried, in any frame; `NO_COLOR` keeps the layout without escape codes. Off a terminal and with
 * `--json` the reply is the model's text exactly as before. The model is a fake OpenAI-compatible
 * server on a real socket answering markdown; the terminal is the real `node bin/svc.js` (the
 * built bundle) under a pseudo-terminal made by util-linux `script`, and the injected stdout of an
 * in-process run.
 */
import { spawn, spawnSync } from "node:child_process"
import { Readable } from "node:stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { CliIo } from "../../cli/io.js"
import { runCli } from "../../cli/program.js"
import { type FakeOpenAi, say, startFakeOpenAi } from "../support/fake-openai.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { setCredits } from "../support/knowledge.js"
import { createAgent } from "../runtime/support.js"
import { repoRoot } from "./helpers.js"

/** ink decides when it is imported whether it runs in CI; this file plays a person at a terminal (as chat.test.ts does). */
const ciVariables = ["CI", "CONTINUOUS_INTEGRATION"] as const
const setAside = Object.fromEntries(ciVariables.map((name) => [name, process.env[name]]))
for (const name of ciVariables) delete process.env[name]
afterAll(() => {
  for (const name of ciVariables) if (setAside[name] !== undefined) process.env[name] = setAside[name]
})

const esc = "\u001b"
/** The model's reply: a heading, bold, italics, code, a link, and an escape sequence of its own (a title change). */
const reply = `# Delivery times\n\nOrders ship in **2 days** from *Rotterdam*.\n\n- \`express\` lane\n- see [the terms](https://example.test/terms)\n\n${esc}]0;owned\u0007Done.\n`

let fake: FakeOpenAi
let server: TestServer
let agent: string
let env: Record<string, string>

beforeAll(async () => {
  fake = await startFakeOpenAi(() => say(reply))
  server = await startTestServer({ server: { model: { baseUrl: fake.baseUrl, defaultModel: "fake-model", backoffMs: 1, maxAttempts: 2 } } })
  await setCredits(server, 1_000)
  agent = await createAgent(server, { instructions: "Answer in markdown.", model: "fake-model" })
  env = { SVC_BASE_URL: server.baseUrl, SVC_API_KEY: server.key }
})
afterAll(async () => {
  await server?.stop()
  await fake?.close()
})

/** Runs `svc chat AGENT --message …` in this process with the injected stdout a terminal or not. */
const chatInProcess = async (tty: boolean, extraEnv: Record<string, string> = {}, args: Array<string> = []) => {
  let stdout = ""
  let stderr = ""
  const io: CliIo = {
    env: { ...env, ...extraEnv },
    cwd: repoRoot,
    stdout: { write: (text) => (stdout += text), isTTY: tty, columns: 100 },
    stderr: { write: (text) => (stderr += text), isTTY: false },
    stdin: Readable.from([]),
    onStop: () => () => undefined
  }
  const code = await runCli(["chat", agent, "--message", "When will it ship?", ...args], io)
  return { code, stdout, stderr }
}

/** ink's last frame: what the terminal shows once the chat ended (each frame starts a synchronized update). */
const lastFrame = (stdout: string): string => stdout.slice(stdout.lastIndexOf(`${esc}[?2026h`))

/** The drawn reply's checks: escape codes for bold, italics and the heading, no marker left, links as text (address). */
const expectDrawn = (stdout: string) => {
  const frame = lastFrame(stdout)
  expect(frame).toContain(`${esc}[1m2 days${esc}[22m`)
  expect(frame).toContain(`${esc}[3mRotterdam${esc}[23m`)
  expect(frame).toContain(`${esc}[35m${esc}[1mDelivery times${esc}[22m${esc}[39m`)
  expect(frame).toContain(`${esc}[4mhttps://example.test/terms${esc}[24m`)
  expect(frame.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "")).toMatch(/the terms \(https:\/\/example\.test\/terms\)/)
  expect(frame).not.toContain("**")
  expect(frame).not.toContain("# Delivery")
  expect(frame).not.toContain("`express`")
}

/** No escape sequence of the reply's own (its title change) reached the terminal, in any frame. */
const expectNoReplyEscapes = (stdout: string) => {
  expect(stdout).toContain("]0;owned")
  expect(stdout).not.toContain(`${esc}]`)
  expect(stdout).not.toContain("\u0007")
}

describe("svc chat draws markdown on a terminal", () => {
  it("under a pseudo-terminal, the real command (the bundle) draws the reply with escape codes and no marker", async () => {
    if (spawnSync("script", ["--version"]).status !== 0) {
      console.log("chat-markdown: util-linux `script` is missing; the pseudo-terminal check did not run (the in-process terminal checks below did)")
      return
    }
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, TERM: "xterm-256color" }
    for (const name of [...ciVariables, "NO_COLOR", "FORCE_COLOR", "SVC_DATA_DIR", "SVC_DATABASE_URL"]) delete childEnv[name]
    const command = `exec '${process.execPath}' bin/svc.js chat ${agent} --message 'When will it ship?'`
    const child = spawn("script", ["-q", "-e", "-c", command, "/dev/null"], { cwd: repoRoot, env: childEnv, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    expect(code, stdout).toBe(0)
    expect(stdout).toContain("› When will it ship?")
    expectDrawn(stdout)
    expectNoReplyEscapes(stdout)
  }, 30_000)

  it("on the injected terminal of an in-process run, the same drawing", async () => {
    const run = await chatInProcess(true)
    expect(run.code, run.stderr).toBe(0)
    expectDrawn(run.stdout)
    expectNoReplyEscapes(run.stdout)
  })

  it("with NO_COLOR, the layout without a marker and without the drawing's escape codes", async () => {
    const run = await chatInProcess(true, { NO_COLOR: "1" })
    expect(run.code, run.stderr).toBe(0)
    const frame = lastFrame(run.stdout)
    expect(frame).toContain("Delivery times\n\nOrders ship in 2 days from Rotterdam.")
    expect(frame).toContain("see the terms (https://example.test/terms)")
    expect(frame).not.toMatch(/\u001b\[[0-9;]*m/)
    expect(frame).not.toContain("**")
    expectNoReplyEscapes(run.stdout)
  })
})

describe("svc chat off a terminal", () => {
  it("prints the model's markdown exactly as it came, with no escape code", async () => {
    const run = await chatInProcess(false)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toBe(`${reply}\n`)
  })

  it("--json carries the reply unchanged, even with the injected stdout a terminal", async () => {
    const run = await chatInProcess(true, {}, ["--json"])
    expect(run.code, run.stderr).toBe(0)
    const lines = run.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as { type: string; answer?: { reply: string } })
    expect(lines.at(-1)!.answer!.reply).toBe(reply)
    expect(run.stdout).not.toContain(`${esc}[1m`)
  })
})
