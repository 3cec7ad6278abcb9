/** The tools every connection has: `whoami` and `search_docs`. */
import { Effect, Schema } from "effect"
import * as z from "zod/v4"
import { VectorSearch } from "../knowledge/embeddings/vector-search.js"
import { familyNames } from "./families.js"
import { docsIndex } from "./docs-index.js"
import { tool } from "../mcp-door/tool.js"

const Named = Schema.Struct({ id: Schema.String, slug: Schema.String, name: Schema.String, plan: Schema.String })

/** What `whoami` answers. */
const WhoamiAnswer = Schema.Struct({
  organization: Named,
  member: Schema.NullOr(Schema.Struct({ id: Schema.String, email: Schema.String, role: Schema.String })),
  role: Schema.NullOr(Schema.String),
  key: Schema.Struct({ id: Schema.String, prefix: Schema.String, kind: Schema.String }),
  connection: Schema.Union(
    Schema.Struct({ kind: Schema.Literal("sign_in"), sessionId: Schema.String, client: Schema.NullOr(Schema.String), address: Schema.NullOr(Schema.String) }),
    Schema.Struct({ kind: Schema.Literal("personal_key") })
  ),
  connectionId: Schema.NullOr(Schema.String),
  families: Schema.Array(Schema.String),
  scopes: Schema.Array(Schema.String),
  runsAllowed: Schema.Boolean,
  runsRefusedBecause: Schema.optional(Schema.String),
  retrieval: Schema.Struct({ mode: Schema.Literal("lexical", "hybrid"), embeddingModel: Schema.NullOr(Schema.String) })
})

/** What `search_docs` answers: sections of the documentation, best first. */
const DocsAnswer = Schema.Struct({
  items: Schema.Array(Schema.Struct({ file: Schema.String, heading: Schema.String, score: Schema.Number, snippet: Schema.String }))
})

const whoami = tool({
  name: "whoami",
  title: "Who am I",
  description:
    "Who this connection acts as: the organization, your member and role, the tool families offered (those the address selects that your role and scopes give you a tool of), whether runs are allowed, and how search retrieves (lexical, or hybrid with an embedding model).",
  input: {},
  operation: null,
  noTwin: "the connection's own identity and offer, an MCP question with no REST operation",
  output: { schema: WhoamiAnswer },
  scopes: [],
  hints: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  handler: (_args, { principal, families, offeredFamilies, runsAllowed }) =>
    Effect.map(VectorSearch, (vectors) => ({
      organization: { id: principal.organization.id, slug: principal.organization.slug, name: principal.organization.name, plan: principal.organization.plan },
      member: principal.member ? { id: principal.member.id, email: principal.member.email, role: principal.member.role } : null,
      role: principal.member?.role ?? null,
      key: { id: principal.key.id, prefix: principal.key.prefix, kind: principal.key.kind },
      connection: principal.signIn
        ? { kind: "sign_in", sessionId: principal.signIn.sessionId, client: principal.signIn.clientName, address: principal.signIn.address }
        : { kind: "personal_key" },
      connectionId: principal.connectionId ?? null,
      families: familyNames.filter((name) => (offeredFamilies ?? families).has(name)),
      scopes: [...principal.scopes].sort(),
      runsAllowed,
      ...(runsAllowed ? {} : { runsRefusedBecause: "Runs from a connected client are refused on a free trial until the first payment (feature_not_available)." }),
      retrieval: { mode: vectors.mode, embeddingModel: vectors.model }
    }))
})

const searchDocs = tool({
  name: "search_docs",
  title: "Search the documentation",
  description: "Search this service's own documentation (the API spec, conventions, README, decisions) offline; answers sections with snippets.",
  input: {
    query: z.string().min(1).max(1000).describe("What to look for."),
    limit: z.number().int().min(1).max(20).optional().describe("How many sections, 1 to 20 (default 5).")
  },
  operation: null,
  noTwin: "the service's own documentation, searched offline; not part of the External API",
  output: { schema: DocsAnswer },
  scopes: [],
  hints: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  handler: (args) => Effect.sync(() => ({ items: docsIndex().search(args.query, args.limit ?? 5) }))
})

/** Always offered, whatever the families and the role. */
export const coreTools = [whoami, searchDocs] as const
