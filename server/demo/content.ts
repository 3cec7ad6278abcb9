/**
 * The demo's content, read from `fixtures/demo/`: handbook pages,
 * a price list PDF, a support Agent, a lead-qualification Flow and an App combining them.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** Where the fixtures are, from `dist/server/demo/` or `server/demo/` alike. */
const fixturesRoot = fileURLToPath(new URL("../../../fixtures/", import.meta.url))
const fixturesFallback = fileURLToPath(new URL("../../fixtures/", import.meta.url))

const fixture = (name: string): string => {
  const found = [fixturesRoot, fixturesFallback].map((root) => root + name).find((path) => existsSync(path))
  if (found === undefined) throw new Error(`The demo fixture '${name}' is missing.`)
  return found
}

/** One handbook page: its title (the first heading) and its markdown. */
export interface DemoPage {
  readonly title: string
  readonly markdown: string
}

/** Everything the demo seeds. */
export interface DemoContent {
  readonly pages: ReadonlyArray<DemoPage>
  readonly pdf: { readonly name: string; readonly bytes: Uint8Array }
  readonly agent: Record<string, unknown>
  readonly flow: Record<string, unknown>
  readonly app: Record<string, unknown>
}

/** Reads the demo's fixtures. */
export const readDemoContent = (): DemoContent => {
  const pagesDir = fixture("demo/pages")
  const pages = readdirSync(pagesDir)
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => {
      const markdown = readFileSync(`${pagesDir}/${name}`, "utf8")
      const title = /^#\s+(.+)$/m.exec(markdown)?.[1]?.trim() ?? name.replace(/^\d+-|\.md$/g, "")
      return { title, markdown }
    })
  const json = (name: string) => JSON.parse(readFileSync(fixture(`demo/${name}`), "utf8")) as Record<string, unknown>
  return {
    pages,
    pdf: { name: "Price list and product care.pdf", bytes: new Uint8Array(readFileSync(fixture("demo/price-list.pdf"))) },
    agent: json("agent.json"),
    flow: json("flow.json"),
    app: json("app.json")
  }
}
