/** `svc memories add`: writes a personal note (a memory) for a member of an organization. */
import type { Command } from "commander"
import type { Memory } from "../../server/knowledge/memories/service.js"
import { admin } from "../admin.js"
import { type DataDirOptions, withDataDir } from "../options.js"
import { output } from "../output.js"
import { shortTime } from "../ui/blocks.js"
import type { CliIo } from "../io.js"
import { noteOrgLeftOut, orgHelp } from "../org-option.js"

interface AddOptions extends DataDirOptions {
  readonly org: string
  readonly member: string
}

/** A memory as the CLI prints it. */
export const memoryJson = (memory: Memory) => ({ id: memory.id, text: memory.text })

const add = async (io: CliIo, text: string, options: AddOptions) => {
  const [{ AccountsService }, { MemoryService }, Effect, Layer] = await Promise.all([
    import("../../server/identity/service.js"),
    import("../../server/knowledge/memories/service.js"),
    import("effect/Effect"),
    import("effect/Layer")
  ])
  const memory = await admin(
    io,
    options,
    Layer.merge(AccountsService.Default, MemoryService.Default),
    Effect.gen(function* () {
      const member = yield* (yield* AccountsService).member(options.org, options.member)
      return yield* (yield* MemoryService).add(member.organizationId, member.id, text)
    })
  )
  await output(io, options, memory, {
    json: (m) => ({ memory: memoryJson(m) }),
    human: (m) => [
      { kind: "title", text: `Added a memory for ${options.member} in ${options.org}` },
      { kind: "fields", rows: [["id", m.id], ["text", m.text], ["created", shortTime(m.createdAt)]] },
      { kind: "note", text: "Only this member's personal keys find it when they search with kinds including memories." }
    ]
  })
}

/** Registers `svc memories`. */
export const memoriesCommands = (program: Command, io: CliIo): void => {
  const memories = program.command("memories").description("members' personal notes (memories)")
  withDataDir(
    memories
      .command("add")
      .description("add a memory for a member")
      .argument("<text>", "the note, 1 to 10,000 characters")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
      .requiredOption("--member <email>", "the member it belongs to")
  ).action((text: string, options: AddOptions) => add(io, text, options))
}
