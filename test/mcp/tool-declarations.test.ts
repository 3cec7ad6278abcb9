/**
 * Every MCP tool against the REST operation it mirrors (issue 22): its scopes and gate are the ones
 * the policy index enforces on that route, its hints follow the method, and each argument it shares
 * with the operation carries the operation's bounds (lengths, ranges, item counts, enumerations,
 * nullability), read from the JSON Schema the contract generates from its Effect Schema. Arguments
 * of the tool's own, and tools without a REST twin, must say why. Over MCP, each listed tool carries
 * its hints as its `annotations`.
 */
import { HttpApi } from "@effect/platform"
import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as z from "zod/v4"
import type { ApiScope, Gate } from "../../server/identity/domain.js"
import { admittingScopes, policyIndex } from "../../server/http/policy.js"
import { Api } from "../../server/api.js"
import { fieldsOf, type JsonSchema } from "../../server/mcp-door/operation.js"
import type { McpTool } from "../../server/mcp-door/tool.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { connect, personalKey } from "../support/mcp.js"
import { everyTool } from "../support/mcp-tools.js"

/** What the contract says of each operation, by `group.endpoint`: the policy REST enforces and its inputs. */
const contract = (() => {
  const policies = policyIndex(Api)
  const operations = new Map<string, { method: string; scopes: ReadonlyArray<ApiScope>; gate: Gate | undefined; inputs: Map<string, JsonSchema> }>()
  HttpApi.reflect(Api as unknown as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ group, endpoint }) => {
      const policy = policies.get(`${endpoint.method} ${endpoint.path}`)!
      const inputs = new Map<string, JsonSchema>()
      for (const source of [endpoint.pathSchema, endpoint.urlParamsSchema, endpoint.payloadSchema]) {
        for (const [name, schema] of fieldsOf(Option.getOrUndefined(source))) if (!inputs.has(name)) inputs.set(name, schema)
      }
      operations.set(`${group.identifier}.${endpoint.name}`, {
        method: endpoint.method,
        scopes: policy.scope === undefined ? [] : admittingScopes(policy.scope),
        gate: policy.gate,
        inputs
      })
    }
  })
  return operations
})()

/** The bounds of a JSON Schema, without its words (descriptions, titles, examples) or what zod cannot publish (patterns, formats). */
const boundsOf = (schema: JsonSchema): unknown => {
  const members = (schema["anyOf"] ?? schema["oneOf"]) as Array<JsonSchema> | undefined
  if (members !== undefined) {
    const present = members.filter((member) => member["type"] !== "null")
    const nullable = present.length < members.length
    const literals = present.map((member) => member["const"] ?? (Array.isArray(member["enum"]) && member["enum"].length === 1 ? member["enum"][0] : undefined))
    const inner =
      literals.every((literal) => literal !== undefined) && present.length > 1
        ? { type: "string", enum: [...literals].sort() }
        : present.length === 1
          ? boundsOf(present[0]!)
          : { anyOf: present.map(boundsOf) }
    return nullable ? { nullable: true, of: inner } : inner
  }
  if (Array.isArray(schema["type"])) {
    const types = schema["type"] as Array<string>
    const present = types.filter((type) => type !== "null")
    const inner = present.length === 1 ? boundsOf({ ...schema, type: present[0] }) : { types: [...present].sort() }
    return types.includes("null") ? { nullable: true, of: inner } : inner
  }
  const bounds: Record<string, unknown> = {}
  const single = schema["const"] ?? (Array.isArray(schema["enum"]) && schema["enum"].length === 1 ? schema["enum"][0] : undefined)
  if (single !== undefined) return { type: typeof single, enum: [single] }
  if (Array.isArray(schema["enum"])) bounds["enum"] = [...schema["enum"]].sort()
  bounds["type"] = schema["type"] ?? "any"
  for (const key of ["minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems"]) {
    if (schema[key] !== undefined) bounds[key] = schema[key]
  }
  if (schema["items"] !== undefined) bounds["items"] = boundsOf(schema["items"] as JsonSchema)
  const properties = schema["properties"] as Record<string, JsonSchema> | undefined
  if (properties !== undefined && Object.keys(properties).length > 0) {
    bounds["properties"] = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, boundsOf(property)]))
    bounds["required"] = [...(schema["required"] ?? [])].sort()
  }
  return bounds
}

/** A tool's published input schema, as the MCP SDK publishes it. */
const inputSchemaOf = (candidate: McpTool): JsonSchema =>
  z.toJSONSchema(candidate.input instanceof z.ZodType ? candidate.input : z.object(candidate.input), { io: "input" }) as JsonSchema

/** What is wrong with a tool's declaration against the contract (empty: nothing). */
const problemsOf = (candidate: McpTool): Array<string> => {
  const problems: Array<string> = []
  if (candidate.operations.length === 0) {
    if (!(typeof candidate.noTwin === "string" && candidate.noTwin.length > 10)) problems.push("no operation and no reason")
    if (candidate.hints === undefined) problems.push("no hints")
    return problems
  }
  if (candidate.noTwin !== null) problems.push("mirrors operations but says it has no twin")
  const mirrored = candidate.operations.map((one) => {
    const found = contract.get(one.name)
    if (found === undefined) problems.push(`${one.name} is not an operation of the contract`)
    else if (found.method !== one.method) problems.push(`${one.name} is a ${found.method}, not a ${one.method}`)
    return found
  })
  if (mirrored.some((one) => one === undefined)) return problems
  const operations = mirrored as Array<NonNullable<(typeof mirrored)[number]>>
  const scopes = [...new Set(operations.flatMap((one) => one.scopes))]
  const gates = [...new Set(operations.map((one) => one.gate))]
  if (candidate.scopeRule === undefined) {
    if (JSON.stringify(candidate.scopes) !== JSON.stringify(scopes)) problems.push(`scopes ${JSON.stringify(candidate.scopes)}, the operations' ${JSON.stringify(scopes)}`)
  } else if (!(candidate.scopeRule.because.length > 10 && candidate.scopes === candidate.scopeRule.scopes)) {
    problems.push("a scope rule without its reason")
  }
  if (candidate.gate !== (gates.length === 1 ? gates[0] : undefined)) problems.push(`gate ${candidate.gate}, the operations' ${gates.join(" / ")}`)
  const hints = {
    readOnlyHint: operations.every((one) => one.method === "GET"),
    destructiveHint: operations.some((one) => one.method === "DELETE"),
    idempotentHint: operations.every((one) => ["GET", "PUT", "PATCH", "DELETE"].includes(one.method))
  }
  if (JSON.stringify(candidate.hints) !== JSON.stringify(hints)) problems.push(`hints ${JSON.stringify(candidate.hints)}, the methods' ${JSON.stringify(hints)}`)
  const published = (inputSchemaOf(candidate)["properties"] ?? {}) as Record<string, JsonSchema>
  for (const [name, schema] of Object.entries(published)) {
    const own = candidate.ownArguments[name]
    const shared = operations.map((one) => one.inputs.get(name)).filter((input): input is JsonSchema => input !== undefined)
    const mine = JSON.stringify(boundsOf(schema))
    if (own !== undefined) {
      if (own.length <= 10) problems.push(`${name}: the tool's own without a reason`)
      if (shared.length > 0 && shared.every((input) => JSON.stringify(boundsOf(input)) === mine)) problems.push(`${name}: declared the tool's own, yet the operation's: take it from the operation`)
      continue
    }
    if (shared.length === 0) problems.push(`${name}: neither an input of ${candidate.operations.map((one) => one.name).join(", ")} nor declared the tool's own`)
    const theirs = [...new Set(shared.map((input) => JSON.stringify(boundsOf(input))))]
    // Operations that bound it alike: the tool's are theirs. Operations that differ (a create refusing
    // the null its update takes): the tool's are one operation's, and that operation's decode refuses the rest.
    if (theirs.length === 1 && theirs[0] !== mine) problems.push(`${name}: bounds ${mine}, the operation's ${theirs[0]}`)
    if (theirs.length > 1 && !theirs.includes(mine)) problems.push(`${name}: bounds ${mine}, none of the operations' ${theirs.join(" / ")}`)
  }
  for (const name of Object.keys(candidate.ownArguments)) if (published[name] === undefined) problems.push(`${name}: declared the tool's own but not an argument`)
  return problems
}

describe("MCP tool declarations", () => {
  it("derive each tool's scopes, gate, hints and shared bounds from the operation it mirrors; the others say why", async () => {
    const tools = await everyTool()
    expect(tools.length).toBeGreaterThan(55)
    const problems = Object.fromEntries(tools.map((candidate) => [candidate.name, problemsOf(candidate)]).filter(([, found]) => (found as Array<string>).length > 0))
    expect(problems).toEqual({})
  })

  it("names the operations the issue's examples sit in, with the domain's bounds", async () => {
    const tools = new Map((await everyTool()).map((candidate) => [candidate.name, candidate]))
    const search = tools.get("search_knowledgebase")!
    expect(search.operations.map((one) => one.name)).toEqual(["knowledgebases.search"])
    expect(inputSchemaOf(search)["properties"].query).toMatchObject({ type: "string", minLength: 1, maxLength: 1000 })
    const save = tools.get("save_page")!
    expect(save.operations.map((one) => one.name)).toEqual(["pages.create", "pages.update"])
    const patch = inputSchemaOf(save)["properties"].patch
    expect(patch).toMatchObject({ type: "array", minItems: 1, maxItems: 50 })
    expect(patch.items.oneOf.map((member: JsonSchema) => member["properties"].op.const)).toEqual(["replace", "insert_before", "insert_after", "prepend", "append", "replace_range"])
    expect(tools.get("delete_user_group")).toMatchObject({ scopes: ["end_users:write"], gate: "groups", hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true } })
    expect(tools.get("list_authored_apps")).toMatchObject({ scopes: ["apps:write"], gate: "apps", hints: { readOnlyHint: true } })
    expect(tools.get("whoami")).toMatchObject({ operations: [], noTwin: expect.stringContaining("identity"), scopes: [] })
  })

  it("finds a bound written by hand that differs from the operation's, or from each of several operations'", async () => {
    const search = (await everyTool()).find((candidate) => candidate.name === "search_knowledgebase")!
    const input = search.input as z.ZodRawShape
    const handWritten = { ...search, input: { ...input, query: z.string().min(1).max(2000) } }
    expect(problemsOf(handWritten)).toEqual([expect.stringMatching(/^query: bounds .*"maxLength":2000.* the operation's .*"maxLength":1000/)])
    expect(problemsOf({ ...search, scopes: ["knowledge:write"] })).toEqual(['scopes ["knowledge:write"], the operations\' ["knowledge:read"]'])
    expect(problemsOf({ ...search, operations: [], noTwin: null })).toEqual(["no operation and no reason"])
    const saveFlow = (await everyTool()).find((candidate) => candidate.name === "save_flow")!
    const looser = { ...saveFlow, input: { ...(saveFlow.input as z.ZodRawShape), output: z.string().nullable().optional() } }
    expect(problemsOf(looser)).toEqual([expect.stringMatching(/^output: bounds .* none of the operations' .*"maxLength":20000.* \/ .*"maxLength":20000/)])
  })
})

describe("MCP tool annotations", () => {
  let server: TestServer

  beforeAll(async () => {
    server = await startTestServer()
  })

  afterAll(async () => {
    await server.close()
  })

  it("publishes each tool's hints as its annotations, as its operations' methods give them", async () => {
    const client = await connect(server, await personalKey(server, "hints@example.com", "admin"))
    const listed = new Map((await client.listTools()).tools.map((one) => [one.name, one.annotations]))
    const declared = new Map((await everyTool()).map((candidate) => [candidate.name, candidate.hints]))
    expect(listed.size).toBeGreaterThan(40)
    for (const [name, annotations] of listed) expect({ name, annotations }).toEqual({ name, annotations: declared.get(name) })
    expect(listed.get("read_page")).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true })
    expect(listed.get("delete_end_user")).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: true })
    expect(listed.get("save_page")).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false })
    expect(listed.get("update_user_group")).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: true })
    expect(listed.get("whoami")).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true })
    await client.close()
  })
})
