/** Auto-pagination over cursor lists (`{ <plural>: [...], nextCursor }`). */

/** The part every page of a list has. */
export interface CursorPage {
  readonly nextCursor: string | null
}

/** Fetches the page after `cursor` (`undefined` for the first page). */
export type PageFetcher<Page> = (cursor: string | undefined) => Promise<Page>

/**
 * The result of a list call. `await` it for the first page; `for await` over it for every item of
 * every page, following `nextCursor`. Nothing is requested until it is awaited or iterated.
 */
export class PagePromise<Item, Page extends CursorPage = CursorPage> implements PromiseLike<Page>, AsyncIterable<Item> {
  #first: Promise<Page> | undefined

  constructor(
    private readonly fetchPage: PageFetcher<Page>,
    private readonly itemsOf: (page: Page) => ReadonlyArray<Item>,
    private readonly startCursor: string | undefined
  ) {}

  /** The first page, requested once. */
  firstPage(): Promise<Page> {
    this.#first ??= this.fetchPage(this.startCursor)
    return this.#first
  }

  then<A = Page, B = never>(
    onFulfilled?: ((page: Page) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null
  ): Promise<A | B> {
    return this.firstPage().then(onFulfilled, onRejected)
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<Page | B> {
    return this.firstPage().catch(onRejected)
  }

  finally(onFinally?: (() => void) | null): Promise<Page> {
    return this.firstPage().finally(onFinally)
  }

  /** Every page, the first one included, until `nextCursor` is null or a page comes back empty. */
  async *pages(): AsyncGenerator<Page, void, undefined> {
    let page = await this.firstPage()
    for (;;) {
      yield page
      const cursor = page.nextCursor
      if (cursor === null || cursor === "" || this.itemsOf(page).length === 0) return
      page = await this.fetchPage(cursor)
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const page of this.pages()) yield* this.itemsOf(page)
  }

  /** Collects items across pages, at most `max` of them when given. */
  async toArray(options: { readonly max?: number | undefined } = {}): Promise<Item[]> {
    const max = options.max ?? Number.POSITIVE_INFINITY
    const items: Item[] = []
    if (max <= 0) return items
    for await (const item of this) {
      items.push(item)
      if (items.length >= max) break
    }
    return items
  }

  get [Symbol.toStringTag](): string {
    return "PagePromise"
  }
}
