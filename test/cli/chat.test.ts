/**
 * `svc chat` in-process against a real server with the builtin model: one message (the reply
 * streamed as plain text), JSON Lines with `--json`, stdin lines as turns of one conversation,
 * continuing a conversation with `--conversation`, and a clear failure for an id that is no Agent.
 */
import { PassThrough, Readable } from "node:stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { CliIo } from "../../cli/io.js"
import { runCli } from "../../cli/program.js"
import { insertKnowledgebases } from "../support/fixtures.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { setCredits } from "../support/knowledge.js"
import { readySource } from "../support/sources.js"
import { createAgent } from "../runtime/support.js"
import { type CliEnv, expectFailure, svc } from "./helpers.js"

/**
 * ink decides when it is imported whether it runs in CI (then it draws only the last frame, so an
 * interactive chat shows nothing until it ends). This file plays a person at a terminal, so ink is
 * imported (lazily, by the CLI) with the CI variables of this process set aside, and they are put
 * back afterwards.
 */
const ciVariables = ["CI", "CONTINUOUS_INTEGRATION"] as const
const setAside = Object.fromEntries(ciVariables.map((name) => [name, process.env[name]]))
for (const name of ciVariables) delete process.env[name]
afterAll(() => {
  for (const name of ciVariables) if (setAside[name] !== undefined) process.env[name] = setAside[name]
})

let server: TestServer
let env: CliEnv
let agent: string
const term = "platypusvortle"

beforeAll(async () => {
  server = await startTestServer()
  env = { SVC_BASE_URL: server.baseUrl, SVC_API_KEY: server.key }
  await setCredits(server, 1_000)
  const [kb] = await insertKnowledgebases(server, { count: 1, prefix: "Handbook" })
  await readySource(server, kb!.id, { name: "Refund handbook", markdown: true, text: `# Refunds\n\nA ${term} refund is paid within thirty days.\n` })
  agent = await createAgent(server, { knowledgebaseIds: [kb!.id] })
})
afterAll(async () => {
  await server?.stop()
})

const chat = (...args: Array<string>) => svc(["chat", agent, ...args], undefined, env)
const jsonLines = (stdout: string) => stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, any>)
const messagesOf = async (conversation: string) =>
  (await server.request("GET", `/conversations/${conversation}/messages`)).body.messages.map((m: { role: string; text: string }) => [m.role, m.text])

/** Runs `svc chat` with `lines` on stdin (no TTY). */
const chatWithStdin = async (args: Array<string>, lines: Array<string>, tty = false) => {
  let stdout = ""
  let stderr = ""
  const io: CliIo = {
    env: { CI: "true", ...env },
    cwd: process.cwd(),
    stdout: { write: (text) => (stdout += text), isTTY: tty, columns: 100 },
    stderr: { write: (text) => (stderr += text), isTTY: false },
    stdin: Readable.from(lines.map((line) => `${line}\n`)),
    onStop: () => () => undefined
  }
  const code = await runCli(["chat", agent, ...args], io)
  return { code, stdout, stderr }
}

describe("svc chat", () => {
  it("--message sends one message and prints the reply as plain text; the conversation id goes to stderr", async () => {
    const run = await chat("--message", `How is a ${term} refund paid?`)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain("thirty days")
    expect(run.stdout.endsWith("\n")).toBe(true)
    const conversation = /conversation ([0-9a-f-]{36})/.exec(run.stderr)?.[1]
    expect(conversation).toBeDefined()
    expect(await messagesOf(conversation!)).toEqual([
      ["user", `How is a ${term} refund paid?`],
      ["assistant", run.stdout.trimEnd()]
    ])
  })

  it("--json prints JSON Lines: start, tool, deltas, then done with the answer", async () => {
    const run = await chat("--message", `${term} refund`, "--json")
    expect(run.code, run.stderr).toBe(0)
    const events = jsonLines(run.stdout)
    expect(events[0]).toEqual({ type: "start", executionId: expect.any(String), conversation_id: expect.any(String) })
    const done = events.at(-1)!
    expect(done).toEqual({ type: "done", answer: { reply: expect.any(String), conversation_id: events[0]!.conversation_id, executionId: events[0]!.executionId } })
    expect(events.filter((e) => e.type === "tool")).toEqual([{ type: "tool", name: "search_knowledgebases" }])
    expect(events.filter((e) => e.type === "delta").map((e) => e.text).join("")).toBe(done.answer.reply)
  })

  it("reads stdin lines as messages of one conversation when --message is absent", async () => {
    const run = await chatWithStdin(["--json"], [`first ${term}`, "", `second ${term}`])
    expect(run.code, run.stderr).toBe(0)
    const done = jsonLines(run.stdout).filter((e) => e.type === "done")
    expect(done).toHaveLength(2)
    expect(done[1]!.answer.conversation_id).toBe(done[0]!.answer.conversation_id)
    const roles = (await messagesOf(done[0]!.answer.conversation_id)).map(([role, text]: [string, string]) => `${role}:${role === "user" ? text : ""}`)
    expect(roles).toEqual([`user:first ${term}`, "assistant:", `user:second ${term}`, "assistant:"])
  })

  it("--conversation continues a conversation", async () => {
    const first = jsonLines((await chat("--message", `opening ${term}`, "--json")).stdout).at(-1)!.answer
    const second = await chat("--message", `follow-up ${term}`, "--conversation", first.conversation_id, "--json")
    expect(second.code, second.stderr).toBe(0)
    expect(jsonLines(second.stdout).at(-1)!.answer.conversation_id).toBe(first.conversation_id)
    expect((await messagesOf(first.conversation_id)).map(([role]: [string]) => role)).toEqual(["user", "assistant", "user", "assistant"])
  })

  it("talks to an App by its id: the routed member's reply on stdout, the App's greeting on stderr", async () => {
    const created = await server.request("POST", "/apps", { body: { name: "Front desk", greeting: "Hello from the desk.", agentIds: [agent] } })
    const app = created.body.app.id as string
    expect((await server.request("POST", `/apps/${app}/publish`)).status).toBe(200)
    const run = await svc(["chat", app, "--message", `How is a ${term} refund paid?`], undefined, env)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain("thirty days")
    expect(run.stderr).toContain("greeting: Hello from the desk.")
  })

  it("fails with one clear line for an id that is no Agent (nor an App it can talk to)", async () => {
    const unknown = "00000000-0000-4000-8000-000000000000"
    const line = expectFailure(await svc(["chat", unknown, "--message", "hi"], undefined, env), 1)
    expect(line).toContain(`not_found: No published Agent '${unknown}'`)
    expect(line).toContain(`Nor is '${unknown}' an App`)
    const json = await svc(["chat", unknown, "--message", "hi", "--json"], undefined, env)
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout.trimEnd().split("\n").at(-1)!)).toMatchObject({ error: { code: "not_found" } })
  })

  it("on a terminal (the injected stdout) renders the ink chat: the message, then the reply", async () => {
    const run = await chatWithStdin(["--message", `tty ${term}`], [], true)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`› tty ${term}`)
    expect(run.stdout).toContain("thirty days")
    const plain = await chat("--message", `tty ${term}`)
    expect(plain.stdout).not.toContain("›")
  })

  it("on a terminal without --message reads typed lines: Enter sends, an empty line ends", async () => {
    const keyboard = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => keyboard, ref: () => keyboard, unref: () => keyboard })
    let stdout = ""
    const io: CliIo = {
      env: { CI: "true", ...env },
      cwd: process.cwd(),
      stdout: { write: (text) => (stdout += text), isTTY: true, columns: 100 },
      stderr: { write: () => true, isTTY: false },
      stdin: keyboard,
      onStop: () => () => undefined
    }
    const exited = runCli(["chat", agent], io)
    const typeWhenReady = async (text: string, ready: () => boolean) => {
      await expect.poll(ready, { timeout: 10_000 }).toBe(true)
      keyboard.write(text)
    }
    await typeWhenReady(`typed ${term}`, () => stdout.includes("type a message"))
    await typeWhenReady("\r", () => stdout.includes(`typed ${term}`))
    await typeWhenReady("\r", () => stdout.includes("thirty days") && stdout.includes("conversation "))
    expect(await exited).toBe(0)
    const conversation = /conversation ([0-9a-f-]{36})/.exec(stdout)![1]!
    expect((await messagesOf(conversation))[0]).toEqual(["user", `typed ${term}`])
  }, 40_000)

  it("an unknown conversation is refused with the API's error", async () => {
    const run = await chat("--message", "hi", "--conversation", "00000000-0000-4000-8000-000000000001")
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("No conversation of this Agent '00000000-0000-4000-8000-000000000001'")
  })
})
