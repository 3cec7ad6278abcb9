/**
 * `svc status`: what a data directory holds and whether a server runs on it: the server's record
 * (`server.json`, counted only while its process lives), every organization with its plan and the
 * prefixes of its working keys (never a secret), and how many of each main object it has. Read-only,
 * so it runs beside a server; on a directory without data it is refused and creates nothing.
 */
import type { Command } from "commander"
import type { OrganizationCounts, OrganizationInventory } from "../../server/inventory.js"
import { admin } from "../admin.js"
import type { CliIo } from "../io.js"
import { type DataDirOptions, resolveDatabase, resolveDataDir, withDataDir } from "../options.js"
import { output } from "../output.js"
import { runningServer, type ServerRecord } from "../server-file.js"
import type { Block } from "../ui/blocks.js"

/** Where the data is, as `svc status --json` names it (a PostgreSQL URL without its password). */
type DatabaseJson = { readonly kind: "sqlite"; readonly file: string } | { readonly kind: "postgres"; readonly url: string }

/** What `svc status` found. */
interface Status {
  readonly dataDir: string
  readonly database: DatabaseJson
  readonly server: ServerRecord | null
  readonly organizations: ReadonlyArray<OrganizationInventory>
}

/** The counts' labels for people, in the order `--json` lists them. */
const countLabels: ReadonlyArray<readonly [keyof OrganizationCounts, string]> = [
  ["knowledgebases", "Knowledgebases"],
  ["pages", "pages"],
  ["sources", "sources"],
  ["agents", "Agents"],
  ["flows", "Flows"],
  ["apps", "Apps"],
  ["endUsers", "end users"],
  ["plans", "plans"],
  ["portals", "Portals"],
  ["suites", "Suites"],
  ["conversations", "conversations"],
  ["executions", "executions"]
]

/** `svc status --json`. */
export const statusJson = (status: Status) => ({
  running: status.server !== null,
  server: status.server && { pid: status.server.pid, baseUrl: status.server.baseUrl, mcpUrl: status.server.mcpUrl, startedAt: status.server.startedAt },
  dataDir: status.dataDir,
  database: status.database,
  organizations: status.organizations.map(({ organization, keys, counts }) => ({
    id: organization.id,
    slug: organization.slug,
    name: organization.name,
    plan: organization.plan,
    keys: keys.map((key) => ({ id: key.id, name: key.name, kind: key.kind, prefix: key.prefix })),
    counts
  }))
})

const statusBlocks = (status: Status): Array<Block> => {
  const where = status.database.kind === "sqlite" ? status.dataDir : status.database.url
  const slugs = status.organizations.map(({ organization }) => organization.slug)
  return [
    status.server === null
      ? { kind: "title", tone: "info", text: `No server is running on ${where}` }
      : { kind: "title", tone: "success", text: `svc is running on ${where} (pid ${status.server.pid})` },
    {
      kind: "fields",
      rows: [
        ...(status.server === null
          ? []
          : ([
              ["Base URL", status.server.baseUrl],
              ["MCP URL", status.server.mcpUrl],
              ["Started", status.server.startedAt]
            ] as const)),
        status.database.kind === "sqlite" ? ["Data dir", status.dataDir] : ["Database", status.database.url]
      ]
    },
    {
      kind: "table",
      columns: ["organization", "name", "plan", "keys"],
      rows: status.organizations.map(({ organization, keys }) => [
        organization.slug,
        organization.name,
        organization.plan,
        keys.length === 0 ? "none" : keys.map((key) => `${key.prefix}…`).join(", ")
      ]),
      empty: "No organizations yet (svc orgs create --slug S makes one)."
    },
    ...(slugs.length === 0
      ? []
      : [
          {
            kind: "table",
            columns: ["", ...slugs],
            rows: countLabels.map(([field, label]) => [label, ...status.organizations.map(({ counts }) => counts[field].toLocaleString("en-US"))]),
            empty: ""
          } as const
        ])
  ]
}

const status = async (io: CliIo, options: DataDirOptions) => {
  const [{ InventoryLive, inventory }, { maskedDatabaseUrl }, { databaseFile }] = await Promise.all([
    import("../../server/inventory.js"),
    import("../../server/platform/sql/dialect.js"),
    import("../../server/platform/sql/database-file.js")
  ])
  const dataDir = resolveDataDir(io, options.dataDir)
  const url = resolveDatabase(io, options.database)
  const organizations = await admin(io, options, InventoryLive, inventory)
  const result: Status = {
    dataDir,
    database: url === undefined ? { kind: "sqlite", file: databaseFile(dataDir) } : { kind: "postgres", url: maskedDatabaseUrl(url) },
    // Read after the data: a server that stopped meanwhile is not reported as running.
    server: runningServer(dataDir),
    organizations
  }
  await output(io, options, result, { json: statusJson, human: statusBlocks })
}

/** Registers `svc status`. */
export const statusCommand = (program: Command, io: CliIo): void => {
  withDataDir(
    program
      .command("status")
      .description("whether a server runs on the data directory (pid, addresses), its organizations, key prefixes and counts")
  ).action((options: DataDirOptions) => status(io, options))
}
