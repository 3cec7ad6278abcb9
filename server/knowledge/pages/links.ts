/**
 * Page and file links inside page markdown (contract: "Page and file links inside markdown").
 *
 * A page body mentions another page with `svcpage://<page-id>` and an uploaded file with
 * `svcsource://<source-id>`, written as markdown links. This module is pure: {@link extractLinks}
 * finds the mentioned ids with a CommonMark parser, and {@link resolveLinks} turns them, together
 * with what the caller found in the same Knowledgebase, into the `links` object every write answers.
 */
import type { Definition, Nodes } from "mdast"
import { Schema } from "effect"
import { fromMarkdown } from "mdast-util-from-markdown"
import { visit } from "unist-util-visit"

/** What a mention points at: a page (`svcpage://`) or an uploaded file (`svcsource://`). */
export type LinkKind = "page" | "source"

/** A mention that is malformed or points outside the Knowledgebase, as `{kind, id}`. */
export interface UnresolvedLink {
  readonly kind: LinkKind
  readonly id: string
}

/** The ids a markdown body mentions; see {@link extractLinks}. */
export interface ExtractedLinks {
  /** Lowercase page UUIDs, deduplicated, in order of first mention. */
  readonly pages: ReadonlyArray<string>
  /** Lowercase source UUIDs, deduplicated, in order of first mention. */
  readonly sources: ReadonlyArray<string>
  /** Mentions whose id is not a bare UUID, with the raw text after `://`, deduplicated, in document order. */
  readonly invalid: ReadonlyArray<UnresolvedLink>
}

/**
 * The pages and sources that exist in the Knowledgebase being written, keyed by lowercase UUID
 * (as the service stores them): page id → title, source id → name. The caller need only look up
 * the ids {@link extractLinks} found.
 */
export interface KnownTargets {
  readonly pages: ReadonlyMap<string, string>
  readonly sources: ReadonlyMap<string, string>
}

/** A resolved page mention. */
export interface PageLink {
  id: string
  title: string
}

/** A resolved source (file) mention. */
export interface SourceLink {
  id: string
  name: string
}

/** The `links` object of every page write answer. */
export interface Links {
  pages: Array<PageLink>
  sources: Array<SourceLink>
  unresolved: Array<UnresolvedLink>
}

const schemes: ReadonlyArray<readonly [prefix: string, kind: LinkKind]> = [
  ["svcpage://", "page"],
  ["svcsource://", "source"]
]

/** Same pattern as effect's `Schema.UUID`, so every id extracted here also decodes there. */
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Parsing costs about half a second per 200 KB, so bodies that cannot hold a mention skip it. A
 * mention spells its scheme out, or hides letters in numeric character references (`&#x73;`);
 * no named reference stands for an ASCII letter.
 */
const mayMention = /svcpage|svcsource|&#/i

/**
 * Finds the pages and sources a markdown body mentions.
 *
 * The body is parsed as CommonMark (`mdast-util-from-markdown`, no extensions); a mention is the
 * destination of:
 * - an inline link `[Title](svcpage://<id>)`, anywhere inline content appears (paragraphs, headings,
 *   list items, block quotes, and table rows, which plain CommonMark reads as paragraphs);
 * - an autolink `<svcpage://<id>>`;
 * - a reference link (`[Title][ref]`, `[ref][]`, `[ref]`) whose definition `[ref]: svcpage://<id>`
 *   exists; a definition nobody references renders nothing and is not a mention, and of duplicate
 *   definitions the first wins, as in CommonMark;
 * - an image or image reference: `![diagram](svcsource://<id>)` embeds, and so mentions, that file
 *   (an image of a `svcpage://` address likewise mentions the page).
 *
 * Not mentions: bare text such as `see svcpage://<id>` (the contract says mentions are written as
 * markdown links), anything in fenced or indented code blocks or inline code, raw HTML
 * (`<a href="svcpage://…">`), and other spellings such as `svcpage:<id>`.
 *
 * The scheme is matched case-insensitively (RFC 3986). What follows `://` must be exactly one UUID,
 * any case, normalized to lowercase; a trailing slash, query, fragment or any other text, or a
 * non-UUID id, makes the mention invalid, reported in `invalid` with the raw text after `://`
 * (character references and backslash escapes already decoded by the parser). Each list is
 * deduplicated and keeps the order of first occurrence in the document.
 */
export const extractLinks = (markdown: string): ExtractedLinks => {
  if (!mayMention.test(markdown)) return { pages: [], sources: [], invalid: [] }
  const tree = fromMarkdown(markdown)
  const definitions = new Map<string, Definition>()
  visit(tree, "definition", (node) => {
    if (!definitions.has(node.identifier)) definitions.set(node.identifier, node)
  })

  const pages = new Set<string>()
  const sources = new Set<string>()
  const invalid = new Map<string, UnresolvedLink>()
  const mention = (url: string): void => {
    const lower = url.toLowerCase()
    for (const [prefix, kind] of schemes) {
      if (!lower.startsWith(prefix)) continue
      const raw = url.slice(prefix.length)
      if (uuidPattern.test(raw)) (kind === "page" ? pages : sources).add(raw.toLowerCase())
      else if (!invalid.has(`${kind}:${raw}`)) invalid.set(`${kind}:${raw}`, { kind, id: raw })
      return
    }
  }

  visit(tree, (node: Nodes) => {
    switch (node.type) {
      case "link":
      case "image":
        mention(node.url)
        break
      case "linkReference":
      case "imageReference": {
        const definition = definitions.get(node.identifier)
        if (definition !== undefined) mention(definition.url)
        break
      }
    }
  })
  return { pages: [...pages], sources: [...sources], invalid: [...invalid.values()] }
}

/**
 * Resolves extracted mentions against the Knowledgebase being written, giving the write answer's
 * `links`. Mentioned ids found in `known` resolve with their current title or name, in mention
 * order; every other id (a page or source of another Knowledgebase, or one that no longer exists)
 * and every invalid mention is unresolved. `unresolved` lists the unknown page ids, then the unknown
 * source ids, then the invalid mentions, each group in mention order.
 */
export const resolveLinks = (found: ExtractedLinks, known: KnownTargets): Links => {
  const links: Links = { pages: [], sources: [], unresolved: [] }
  const unresolvedSources: Array<UnresolvedLink> = []
  for (const id of found.pages) {
    const title = known.pages.get(id)
    if (title === undefined) links.unresolved.push({ kind: "page", id })
    else links.pages.push({ id, title })
  }
  for (const id of found.sources) {
    const name = known.sources.get(id)
    if (name === undefined) unresolvedSources.push({ kind: "source", id })
    else links.sources.push({ id, name })
  }
  links.unresolved.push(...unresolvedSources, ...found.invalid)
  return links
}

const exampleUuid = "3f0a3a5e-8d4b-4b8e-9c59-2a8e0f7d1c11"
const exampleSourceUuid = "9b2c7d10-4e1f-4a6b-8c3d-5e7f9a0b1c2d"

/** Schema of {@link PageLink}: a page the markdown links to, with its current title. */
export const PageLink = Schema.Struct({
  id: Schema.UUID,
  title: Schema.String
}).annotations({
  identifier: "PageLink",
  description: "A page of the same Knowledgebase mentioned with svcpage://<page-id>.",
  examples: [{ id: exampleUuid, title: "Refund policy" }]
})

/** Schema of {@link SourceLink}: an uploaded file the markdown mentions, with its current name. */
export const SourceLink = Schema.Struct({
  id: Schema.UUID,
  name: Schema.String
}).annotations({
  identifier: "SourceLink",
  description: "An uploaded file of the same Knowledgebase mentioned with svcsource://<source-id>.",
  examples: [{ id: exampleSourceUuid, name: "pricing.pdf" }]
})

/** Schema of {@link UnresolvedLink}: `id` is the raw text after `://`, not necessarily a UUID. */
export const UnresolvedLink = Schema.Struct({
  kind: Schema.Literal("page", "source"),
  id: Schema.String
}).annotations({
  identifier: "UnresolvedLink",
  description: "A mention of a page or file outside this Knowledgebase, no longer existing, or malformed.",
  examples: [{ kind: "page", id: "not-a-page-id" }]
})

/** Schema of {@link Links}, the `links` object of every page write answer. */
export const Links = Schema.Struct({
  pages: Schema.Array(PageLink),
  sources: Schema.Array(SourceLink),
  unresolved: Schema.Array(UnresolvedLink)
}).annotations({
  identifier: "Links",
  description: "Pages and files the written markdown mentions; foreign, stale or malformed mentions are unresolved.",
  examples: [
    {
      pages: [{ id: exampleUuid, title: "Refund policy" }],
      sources: [{ id: exampleSourceUuid, name: "pricing.pdf" }],
      unresolved: [{ kind: "page", id: "not-a-page-id" }]
    }
  ]
})
