/** `svc keys create|list|revoke|activity`: organization and personal API keys. */
import type { Command } from "commander"
import { scopes as allScopes } from "../../server/identity/allowed-values.js"
import type { ApiKey, StoredScopes } from "../../server/identity/domain.js"
import { withAccounts } from "../admin.js"
import { usage } from "../errors.js"
import { keyActivityCommand } from "./key-activity.js"
import { type DataDirOptions, parseList, withDataDir } from "../options.js"
import { output } from "../output.js"
import { type Block, shortTime } from "../ui/blocks.js"
import type { CliIo } from "../io.js"
import { noteOrgLeftOut, orgHelp } from "../org-option.js"

/** A key as `keys list` and `keys revoke` print it (never the secret). */
export const keyJson = (key: ApiKey) => ({
  id: key.id,
  name: key.name,
  kind: key.kind,
  prefix: key.prefix,
  scopes: key.scopes,
  memberId: key.memberId,
  createdAt: key.createdAt,
  lastUsedAt: key.lastUsedAt,
  revokedAt: key.revokedAt
})

const scopesText = (scopes: StoredScopes): string =>
  scopes === "all" ? "all" : allScopes.every((s) => scopes.includes(s)) ? "every scope" : scopes.join(",")

const keyFields = (key: ApiKey): Block => ({
  kind: "fields",
  rows: [
    ["id", key.id],
    ["name", key.name],
    ["kind", key.kind],
    ["prefix", key.prefix],
    ["scopes", scopesText(key.scopes)],
    ...(key.memberId === null ? [] : [["member", key.memberId] as const]),
    ["created", shortTime(key.createdAt)],
    ["last used", shortTime(key.lastUsedAt)],
    ...(key.revokedAt === null ? [] : [["revoked", shortTime(key.revokedAt)] as const])
  ]
})

interface CreateOptions extends DataDirOptions {
  readonly org: string
  readonly name: string
  readonly scopes?: Array<string>
  readonly allScopes?: boolean
  readonly personal?: boolean
  readonly member?: string
}

interface OrgOptions extends DataDirOptions {
  readonly org: string
}

const create = async (io: CliIo, options: CreateOptions) => {
  if ((options.scopes === undefined) === (options.allScopes !== true)) {
    throw usage("give exactly one of --scopes and --all-scopes.")
  }
  if ((options.personal === true) !== (options.member !== undefined)) {
    throw usage("--personal and --member go together: a personal key belongs to a member.")
  }
  const created = await withAccounts(io, options, (a) =>
    a.createKey(options.org, { name: options.name, scopes: options.scopes ?? "all", personalFor: options.member })
  )
  await output(io, options, created, {
    json: ({ key, secret }) => ({ key: { id: key.id, secret, prefix: key.prefix, kind: key.kind, scopes: key.scopes } }),
    human: ({ key, secret }) => [
      { kind: "title", text: `Created ${key.kind} key '${key.name}'${options.member ? ` for ${options.member}` : ""}` },
      keyFields(key),
      { kind: "secret", label: "Secret", value: secret, note: "Shown once: it will not be shown again. Store it now." }
    ]
  })
}

const list = async (io: CliIo, options: OrgOptions) => {
  const keys = await withAccounts(io, options, (a) => a.listKeys(options.org))
  await output(io, options, keys, {
    json: (ks) => ({ keys: ks.map(keyJson) }),
    human: (ks) => [
      { kind: "title", tone: "info", text: `${ks.length} ${ks.length === 1 ? "key" : "keys"} in ${options.org}` },
      {
        kind: "table",
        columns: ["id", "name", "kind", "prefix", "scopes", "created", "last used", "status"],
        rows: ks.map((k) => [
          k.id,
          k.name,
          k.kind,
          k.prefix,
          scopesText(k.scopes),
          shortTime(k.createdAt),
          shortTime(k.lastUsedAt),
          k.revokedAt === null ? "active" : "revoked"
        ]),
        empty: `No keys in ${options.org}.`
      }
    ]
  })
}

/** Revokes a key, telling whether it was revoked already (revoking is idempotent: nothing changes then). */
const revokeOnce = async (io: CliIo, keyId: string, options: OrgOptions) => {
  const Effect = await import("effect/Effect")
  return withAccounts(io, options, (a) =>
    Effect.gen(function* () {
      const before = (yield* a.listKeys(options.org)).find((key) => key.id === keyId)
      const key = yield* a.revokeKey(options.org, keyId)
      return { key, alreadyRevoked: before !== undefined && before.revokedAt !== null }
    })
  )
}

const revoke = async (io: CliIo, keyId: string, options: OrgOptions) => {
  const revoked = await revokeOnce(io, keyId, options)
  await output(io, options, revoked, {
    json: ({ key, alreadyRevoked }) => ({ key: keyJson(key), alreadyRevoked }),
    human: ({ key, alreadyRevoked }) => [
      alreadyRevoked
        ? { kind: "title", tone: "info", text: `Key '${key.name}' (${key.prefix}…) was already revoked; nothing changed` }
        : { kind: "title", text: `Revoked key '${key.name}' (${key.prefix}…)` },
      keyFields(key)
    ]
  })
}

/** Registers `svc keys`. */
export const keysCommands = (program: Command, io: CliIo): void => {
  const keys = program.command("keys").description("create, list and revoke API keys, and see their activity")
  withDataDir(
    keys
      .command("create")
      .description("create an API key; its secret is printed once")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
      .requiredOption("--name <name>", "what the key is for")
      .option("--scopes <scopes>", `comma-separated: ${allScopes.join(", ")}`, parseList)
      .option("--all-scopes", "every scope")
      .option("--personal", "a personal key of --member")
      .option("--member <email>", "the member a personal key belongs to")
  ).action((options: CreateOptions) => create(io, options))
  withDataDir(
    keys.command("list").description("list an organization's keys, revoked ones included").option("--org <slug>", orgHelp).hook("preAction", noteOrgLeftOut)
  ).action((options: OrgOptions) => list(io, options))
  withDataDir(
    keys
      .command("revoke")
      .description("revoke a key; it stops working at once")
      .argument("<key-id>", "the key's id (see svc keys list)")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
  ).action((keyId: string, options: OrgOptions) => revoke(io, keyId, options))
  keyActivityCommand(keys, io)
}
