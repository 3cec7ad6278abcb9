import { join } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import { renderSdk } from "../../scripts/generate-sdk.js"

const repo = fileURLToPath(new URL("../../", import.meta.url))

const errorSchema = (code: string) => ({
  type: "object",
  required: ["error"],
  properties: { error: { type: "object", properties: { code: { type: "string", enum: [code] }, message: { type: "string" } } } }
})
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const jsonContent = (schema: object) => ({ content: { "application/json": { schema } } })
const ok = (schema: object) => ({ description: "ok", ...jsonContent(schema) })
const errors = (...pairs: Array<[string, string[]]>) =>
  Object.fromEntries(pairs.map(([status, names]) => [status, ok(names.length === 1 ? ref(names[0]!) : { anyOf: names.map(ref) })]))
const query = (name: string, required = false) => ({ name, in: "query", required, schema: { type: "string" } })
const pathParam = (name: string) => ({ name, in: "path", required: true, schema: { type: "string" } })
const idempotencyKey = { name: "idempotency-key", in: "header", required: false, schema: { type: "string" } }

/** A document shaped like the groups still to come: hyphenated tags, nested paths, multipart, zip, 200|201. */
const document = {
  openapi: "3.1.0",
  info: { title: "fixture", version: "1" },
  tags: [{ name: "end-users", description: "End users of Portals." }, { name: "knowledgebases" }, { name: "user-groups" }],
  paths: {
    "/api/v1/end-users": {
      get: {
        tags: ["end-users"], operationId: "end-users.list", parameters: [query("email"), query("limit"), query("cursor")],
        responses: { 200: ok(ref("EndUserList")), ...errors(["401", ["Error_Unauthorized", "Error_InvalidApiKey"]]) }
      },
      post: {
        tags: ["end-users"], operationId: "end-users.create", parameters: [idempotencyKey],
        requestBody: { required: true, ...jsonContent({ type: "object", required: ["email"], properties: { email: { type: "string" } } }) },
        responses: { 200: ok(ref("EndUserResponse")), 201: ok(ref("EndUserResponse")), ...errors(["409", ["Error_DeletedIdentity"]]) }
      }
    },
    "/api/v1/knowledgebases/{id}/pages": {
      get: {
        tags: ["knowledgebases"], operationId: "knowledgebases.listPages", parameters: [pathParam("id"), query("cursor")],
        responses: { 200: ok({ type: "object", required: ["knowledgebaseId", "pages", "nextCursor"], properties: { knowledgebaseId: { type: "string" }, pages: { type: "array", items: { type: "object", properties: { id: { type: "string" } } } }, nextCursor: { type: ["string", "null"] } } }) }
      }
    },
    "/api/v1/knowledgebases/{knowledgebaseId}/pages/{pageId}": {
      get: {
        tags: ["knowledgebases"], operationId: "knowledgebases.getPage", parameters: [pathParam("knowledgebaseId"), pathParam("pageId")],
        responses: { 200: ok({ type: "object", properties: { page: { type: "object" } } }), ...errors(["404", ["Error_NotFound"]]) }
      }
    },
    "/api/v1/knowledgebases/{id}/search": {
      post: {
        tags: ["knowledgebases"], operationId: "knowledgebases.search", parameters: [pathParam("id"), query("mode", true)],
        requestBody: { required: false, ...jsonContent({ type: "object", properties: { query: { type: "string" } } }) },
        responses: { 200: ok({ type: "object", properties: { results: { type: "array", items: {} } } }) }
      }
    },
    "/api/v1/knowledgebases/{id}/sources": {
      post: {
        tags: ["knowledgebases"], operationId: "knowledgebases.upload-source", parameters: [pathParam("id"), idempotencyKey],
        requestBody: { required: true, content: { "multipart/form-data": { schema: { type: "object" } } } },
        responses: { 202: ok({ type: "object", properties: { status: { type: "string" } } }) }
      }
    },
    "/api/v1/knowledgebases/{id}/export": {
      get: {
        tags: ["knowledgebases"], operationId: "knowledgebases.export", parameters: [pathParam("id")],
        responses: { 200: { description: "zip", content: { "application/zip": { schema: { type: "string", format: "binary" } } } } }
      }
    },
    "/api/v1/user-groups/{groupId}": {
      delete: {
        tags: ["user-groups"], operationId: "user-groups.delete", parameters: [pathParam("groupId")],
        responses: { 204: { description: "gone" }, ...errors(["409", ["Error_PlanGroupLocked"]]) }
      }
    },
    "/api/v1/user-groups/{groupId}/members": {
      post: {
        tags: ["user-groups"], operationId: "user-groups.addMember", parameters: [pathParam("groupId")],
        requestBody: { required: true, ...jsonContent({ type: "object", properties: { email: { type: "string" } } }) },
        responses: { 200: ok({ type: "object", properties: { ok: { type: "boolean" } } }), ...errors(["422", ["Error_PlanGroupJoin"]]) }
      }
    }
  },
  components: {
    schemas: {
      EndUser: { type: "object", required: ["id", "email"], properties: { id: { type: "string" }, email: { type: "string" } } },
      EndUserList: { type: "object", required: ["endUsers", "nextCursor"], properties: { endUsers: { type: "array", items: ref("EndUser") }, nextCursor: { anyOf: [{ type: "string" }, { type: "null" }] } } },
      EndUserResponse: { type: "object", required: ["endUser", "created"], properties: { endUser: ref("EndUser"), created: { type: "boolean" } } },
      Error_Unauthorized: errorSchema("unauthorized"),
      Error_InvalidApiKey: errorSchema("invalid_api_key"),
      Error_DeletedIdentity: errorSchema("deleted_identity"),
      Error_NotFound: { ...errorSchema("not_found"), description: "No such object in the organization." },
      Error_PlanGroupLocked: errorSchema("plan_group"),
      Error_PlanGroupJoin: errorSchema("plan_group"),
      Error_ServerError: errorSchema("server_error")
    }
  }
}

/** Type-checks generated files as if they sat in `sdk/<dir>/`, beside the real runtime, with the repo's compiler options. */
const typeCheck = (files: Record<string, string>, usage: string): string[] => {
  const config = ts.getParsedCommandLineOfConfigFile(join(repo, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!
  const dir = join(repo, "sdk", "generated-fixture")
  const virtual = new Map(Object.entries({ ...files, "usage.ts": usage }).map(([name, text]) => [join(dir, name), text]))
  const host = ts.createCompilerHost(config.options)
  const readFile = host.readFile.bind(host)
  const fileExists = host.fileExists.bind(host)
  host.readFile = (name) => virtual.get(name) ?? readFile(name)
  host.fileExists = (name) => virtual.has(name) || fileExists(name)
  const directoryExists = host.directoryExists?.bind(host)
  host.directoryExists = (name) => name === dir || (directoryExists?.(name) ?? ts.sys.directoryExists(name))
  const program = ts.createProgram([...virtual.keys()], { ...config.options, noEmit: true }, host)
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))
}

describe("generator on a richer document", () => {
  it("derives resources, signatures and errors from the document alone", async () => {
    const files = await renderSdk(document)
    const resources = files["generated/resources.ts"]!
    expect(resources).toContain("export class EndUsersResource extends Resource")
    expect(resources).toContain("readonly endUsers: EndUsersResource = new EndUsersResource(this)")
    expect(resources).toContain("readonly userGroups: UserGroupsResource")
    expect(resources).toMatch(/list\(params\?: EndUsersListParams, options\?: RequestOptions\): PagePromise<EndUsersListItem, EndUsersListResponse>/)
    expect(resources).toContain(`operations["end-users.create"]["responses"][200]["content"]["application/json"] | operations["end-users.create"]["responses"][201]`)
    expect(resources).toMatch(/getPage\(knowledgebaseId: [^,]+, pageId: [^,]+, options\?: RequestOptions\)/)
    expect(resources).toMatch(/listPages\(id: [^,]+, params\?: KnowledgebasesListPagesParams, options\?: RequestOptions\): PagePromise/)
    expect(resources).toMatch(/search\(id: [^,]+, body: KnowledgebasesSearchBody \| undefined, params: KnowledgebasesSearchParams, options\?: RequestOptions\)/)
    expect(resources).toContain(`uploadSource(id: operations["knowledgebases.upload-source"]["parameters"]["path"]["id"], body: KnowledgebasesUploadSourceBody`)
    expect(resources).toContain(`bodyType: "multipart", idempotent: true`)
    expect(resources).toContain("export type KnowledgebasesExportResponse = Uint8Array")
    expect(resources).toContain("export type UserGroupsDeleteResponse = void")
    const errorsFile = files["generated/errors.ts"]!
    expect(errorsFile).toContain("/** `plan_group` (HTTP 409 or 422). */\nexport class PlanGroupError extends SvcError")
    expect(errorsFile).toContain("export class ServerError extends SvcError")
    expect(errorsFile).toContain("/** `not_found` (HTTP 404): No such object in the organization. */")
    expect(errorsFile.match(/class PlanGroupError/g)).toHaveLength(1)
  })

  it("produces code that type-checks under the project's strict options", async () => {
    const files = await renderSdk(document)
    const generated = Object.fromEntries(
      Object.entries(files).filter(([path]) => path.startsWith("generated/")).map(([path, text]) => [path.slice("generated/".length), text])
    )
    const usage = `
import { SvcResources } from "./resources.js"
import { errorClasses, PlanGroupError } from "./errors.js"
const client = new SvcResources({ apiKey: "k" }, errorClasses)
export const run = async () => {
  for await (const user of client.endUsers.list({ email: "a@b.c", limit: 10 })) user.email.toUpperCase()
  const { endUser, created } = await client.endUsers.create({ email: "a@b.c" }, { idempotencyKey: "k1" })
  const zip: Uint8Array = await client.knowledgebases.export("kb")
  await client.knowledgebases.search("kb", undefined, { mode: "x" })
  await client.userGroups.delete("g").catch((e: unknown) => e instanceof PlanGroupError)
  return [endUser.id, created, zip.length]
}
`
    expect(typeCheck(generated, usage)).toEqual([])
  }, 60_000)
})
