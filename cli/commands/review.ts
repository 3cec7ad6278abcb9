/**
 * `svc review list|approve|reject`: the review inbox of an organization that reviews agent writes
 * (the `review` gate). Page writes wait here until a person approves or rejects them.
 */
import type { Command } from "commander"
import type { Effect } from "effect"
import type { AdminServices } from "../../server/admin.js"
import type { PageService } from "../../server/knowledge/page-service.js"
import { admin } from "../admin.js"
import { type DataDirOptions, withDataDir } from "../options.js"
import { output } from "../output.js"
import { type Block, shortTime } from "../ui/blocks.js"

interface OrgOptions extends DataDirOptions {
  readonly org: string
}

/** A page write waiting for review, as the page service lists it. */
type ReviewItem = Effect.Effect.Success<ReturnType<PageService["pendingReviews"]>>[number]

/** Runs `use` with the page service and the id of the organization `slug` (unknown slug: exit 1). */
const withReview = async <A, E>(
  options: OrgOptions,
  use: (pages: PageService, organizationId: string) => Effect.Effect<A, E, AdminServices>
): Promise<A> => {
  const [{ AccountsService }, { PageService }, { Effect }] = await Promise.all([
    import("../../server/platform/accounts/service.js"),
    import("../../server/knowledge/page-service.js"),
    import("effect")
  ])
  return admin(
    options,
    Effect.gen(function* () {
      const accounts = yield* AccountsService
      const pages = yield* PageService
      const org = yield* accounts.organization(options.org)
      return yield* use(pages, org.id)
    })
  )
}

const reviewJson = (item: ReviewItem) => ({
  id: item.id,
  kind: item.kind,
  knowledgebaseId: item.knowledgebaseId,
  pageId: item.pageId,
  title: item.title,
  author: item.author,
  createdAt: item.createdAt
})

const list = async (options: OrgOptions) => {
  const items = await withReview(options, (pages, organizationId) => pages.pendingReviews(organizationId))
  await output(options, items, {
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
        rows: is.map((i) => [i.id, i.kind.replace(/^page_/, "page "), i.title, i.author ?? "unknown", shortTime(i.createdAt)]),
        empty: "Nothing is waiting for review."
      }
    ]
  })
}

const approve = async (id: string, options: OrgOptions) => {
  const approved = await withReview(options, (pages, organizationId) => pages.approve(organizationId, id))
  await output(options, approved, {
    json: (a) => ({ item: { id: a.id, status: a.status, page: a.page } }),
    human: (a) => [
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
  })
}

const reject = async (id: string, options: OrgOptions) => {
  const rejected = await withReview(options, (pages, organizationId) => pages.reject(organizationId, id))
  await output(options, rejected, {
    json: (r) => ({ item: { id: r.id, status: r.status } }),
    human: (r) => [
      { kind: "title", text: `Rejected review item ${r.id}` },
      { kind: "note", text: "The live page is unchanged; the write stays in the page's history as rejected." }
    ]
  })
}

/** Registers `svc review`. */
export const reviewCommands = (program: Command): void => {
  const review = program.command("review").description("the review inbox: approve or reject agent writes waiting for review")
  withDataDir(
    review.command("list").description("list the writes waiting for review, oldest first").requiredOption("--org <slug>", "the organization")
  ).action(list)
  withDataDir(
    review
      .command("approve")
      .description("approve a write: it goes live at once")
      .argument("<id>", "the review item's id (see svc review list)")
      .requiredOption("--org <slug>", "the organization")
  ).action(approve)
  withDataDir(
    review
      .command("reject")
      .description("reject a write: the live page stays as it is")
      .argument("<id>", "the review item's id (see svc review list)")
      .requiredOption("--org <slug>", "the organization")
  ).action(reject)
}
