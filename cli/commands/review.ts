/**
 * `svc review list|approve|reject`: the review inbox of an organization that reviews agent writes
 * (the `review` gate). Page writes and source uploads wait here until a person approves or rejects
 * them: an approved page write goes live, an approved upload starts indexing, a rejected upload is deleted.
 */
import type { Command } from "commander"
import type { Effect } from "effect"
import type { ReviewService } from "../../server/knowledge/review/service.js"
import { admin } from "../admin.js"
import { type DataDirOptions, withDataDir } from "../options.js"
import { output } from "../output.js"
import { type Block, byteSize, shortTime } from "../ui/blocks.js"
import type { CliIo } from "../io.js"
import { noteOrgLeftOut, orgHelp } from "../org-option.js"

interface OrgOptions extends DataDirOptions {
  readonly org: string
}

type Review = ReviewService
/** An item waiting for review: a page write or a source upload. */
type ReviewItem = Effect.Effect.Success<ReturnType<Review["list"]>>[number]
type Approved = Effect.Effect.Success<ReturnType<Review["approve"]>>
type Rejected = Effect.Effect.Success<ReturnType<Review["reject"]>>

/** Runs `use` with the review service and the id of the organization `slug` (unknown slug: exit 1). */
const withReview = async <A, E>(
  io: CliIo,
  options: OrgOptions,
  use: (review: Review, organizationId: string) => Effect.Effect<A, E>
): Promise<A> => {
  const [{ AccountsService }, { ReviewService }, { IngestionConfig }, Effect, Layer] = await Promise.all([
    import("../../server/identity/service.js"),
    import("../../server/knowledge/review/service.js"),
    import("../../server/knowledge/sources/ingestion-config.js"),
    import("effect/Effect"),
    import("effect/Layer")
  ])
  return admin(
    io,
    options,
    // Approving an upload queues its indexing, under the default ingestion limits.
    Layer.merge(AccountsService.Default, Layer.provide(ReviewService.Default, IngestionConfig.layer())),
    Effect.gen(function* () {
      const org = yield* (yield* AccountsService).organization(options.org)
      return yield* use(yield* ReviewService, org.id)
    })
  )
}

/** An item as `review list --json` prints it: page writes name their `pageId`, uploads their `sourceId`. */
const reviewJson = (item: ReviewItem) => ({
  id: item.id,
  kind: item.kind,
  knowledgebaseId: item.knowledgebaseId,
  ...(item.kind === "source_upload" ? { sourceId: item.sourceId } : { pageId: item.pageId }),
  title: item.title,
  author: item.author,
  createdAt: item.createdAt
})

const list = async (io: CliIo, options: OrgOptions) => {
  const items = await withReview(io, options, (review, organizationId) => review.list(organizationId))
  await output(io, options, items, {
    json: (is) => ({ items: is.map(reviewJson) }),
    human: (is): Array<Block> => [
      ...(is.length === 0
        ? []
        : [
            {
              kind: "title",
              tone: "info",
              text: `${is.length} ${is.length === 1 ? "item" : "items"} waiting for review in ${options.org}`
            } as const
          ]),
      {
        kind: "table",
        columns: ["id", "kind", "title", "author", "created"],
        rows: is.map((i) => [i.id, i.kind.replace("_", " "), i.title, i.author ?? "unknown", shortTime(i.createdAt)]),
        empty: "Nothing is waiting for review."
      }
    ]
  })
}

const approvedJson = (a: Approved) =>
  a.kind === "page" ? { item: { id: a.id, status: a.status, page: a.page } } : { item: { id: a.id, status: a.status, source: a.source } }

const approvedBlocks = (a: Approved): Array<Block> =>
  a.kind === "page"
    ? [
        { kind: "title", text: `Approved review item ${a.id}: '${a.page.title}' is live` },
        {
          kind: "fields",
          rows: [
            ["item", a.id],
            ["status", a.status],
            ["page", a.page.id],
            ["title", a.page.title],
            ["knowledgebase", a.page.knowledgebaseId],
            ["updated", shortTime(a.page.updatedAt)]
          ]
        }
      ]
    : [
        { kind: "title", text: `Approved review item ${a.id}: '${a.source.name}' is being indexed` },
        {
          kind: "fields",
          rows: [
            ["item", a.id],
            ["status", a.status],
            ["source", a.source.id],
            ["name", a.source.name],
            ["type", a.source.type],
            ["size", byteSize(a.source.sizeBytes)],
            ["updated", shortTime(a.source.updatedAt)]
          ]
        },
        { kind: "note", text: "It becomes searchable once indexed; its status turns ready (or failed)." }
      ]

const approve = async (io: CliIo, id: string, options: OrgOptions) => {
  const approved = await withReview(io, options, (review, organizationId) => review.approve(organizationId, id))
  await output(io, options, approved, { json: approvedJson, human: approvedBlocks })
}

const rejectedBlocks = (r: Rejected): Array<Block> => [
  { kind: "title", text: `Rejected review item ${r.id}` },
  {
    kind: "note",
    text:
      r.kind === "page"
        ? "The live page is unchanged; the write stays in the page's history as rejected."
        : "The upload was deleted; it was never searchable."
  }
]

const reject = async (io: CliIo, id: string, options: OrgOptions) => {
  const rejected = await withReview(io, options, (review, organizationId) => review.reject(organizationId, id))
  await output(io, options, rejected, { json: (r) => ({ item: { id: r.id, status: r.status } }), human: rejectedBlocks })
}

/** Registers `svc review`. */
export const reviewCommands = (program: Command, io: CliIo): void => {
  const review = program.command("review").description("the review inbox: approve or reject agent writes and uploads waiting for review")
  withDataDir(
    review.command("list").description("list the writes and uploads waiting for review, oldest first").option("--org <slug>", orgHelp).hook("preAction", noteOrgLeftOut)
  ).action((options: OrgOptions) => list(io, options))
  withDataDir(
    review
      .command("approve")
      .description("approve an item: a page write goes live, an upload starts indexing")
      .argument("<id>", "the review item's id (see svc review list)")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
  ).action((id: string, options: OrgOptions) => approve(io, id, options))
  withDataDir(
    review
      .command("reject")
      .description("reject an item: the live page stays as it is, an upload is deleted")
      .argument("<id>", "the review item's id (see svc review list)")
      .option("--org <slug>", orgHelp)
      .hook("preAction", noteOrgLeftOut)
  ).action((id: string, options: OrgOptions) => reject(io, id, options))
}
