import { join } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import { renderSdk } from "../../scripts/generate-sdk.js"

const repo = fileURLToPath(new URL("../../", import.meta.url))

const ok = { description: "ok", content: { "application/json": { schema: { type: "object", properties: { id: { type: "string" } } } } } }
const pathParam = { name: "id", in: "path", required: true, schema: { type: "string" } }
const idempotencyKey = { name: "idempotency-key", in: "header", required: false, schema: { type: "string" } }
const form = (properties: object, required: string[] = []) => ({ schema: { type: "object", required, properties } })
const binary = { type: "string", format: "binary" }

/** Operations taking JSON or a form, forms with one file field, with two, and one whose fields clash with upload options. */
const document = {
  openapi: "3.1.0",
  info: { title: "fixture", version: "1" },
  paths: {
    "/api/v1/things/{id}/files": {
      post: {
        tags: ["things"], operationId: "things.addFile", parameters: [pathParam, idempotencyKey],
        requestBody: {
          required: true,
          content: {
            "application/json": { schema: { type: "object", required: ["url"], properties: { url: { type: "string" } } } },
            "multipart/form-data": form({ file: binary, label: { type: "string" } }, ["file"])
          }
        },
        responses: { 202: ok }
      }
    },
    "/api/v1/things/{id}/pictures": {
      post: {
        tags: ["things"], operationId: "things.addPicture", parameters: [pathParam],
        requestBody: { required: true, content: { "multipart/form-data": form({ picture: binary }, ["picture"]) } },
        responses: { 200: ok }
      }
    },
    "/api/v1/others/{id}/pair": {
      post: {
        tags: ["others"], operationId: "others.pair", parameters: [pathParam],
        requestBody: { required: true, content: { "multipart/form-data": form({ a: binary, b: binary }) } },
        responses: { 200: ok }
      }
    },
    "/api/v1/others/{id}/named": {
      post: {
        tags: ["others"], operationId: "others.named", parameters: [pathParam],
        requestBody: { required: true, content: { "multipart/form-data": form({ file: binary, fileName: { type: "string" } }) } },
        responses: { 200: ok }
      }
    }
  }
}

const typeCheck = (files: Record<string, string>, usage: string): string[] => {
  const config = ts.getParsedCommandLineOfConfigFile(join(repo, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!
  const dir = join(repo, "sdk", "generated-upload-fixture")
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

describe("generator: operations that take files", () => {
  it("keeps JSON typed, accepts a FormData, and adds upload methods for forms with one file field", async () => {
    const resources = (await renderSdk(document))["generated/resources.ts"]!
    expect(resources).toContain("addFile(id: ")
    expect(resources).toContain("body: ThingsAddFileBody | FormData, options?: RequestOptions")
    expect(resources).toContain(`bodyType: "auto", idempotent: true`)
    expect(resources).toContain(`export type ThingsAddFileUpload = MultipartUpload<`)
    expect(resources).toContain(`addFileUpload(id: `)
    expect(resources).toContain(`body: multipartForm(upload, "file"), bodyType: "multipart", idempotent: true, options, onProgress: options?.onProgress`)
    expect(resources).toContain(`addPictureUpload(id: `)
    expect(resources).toContain(`body: ThingsAddPictureBody, options?: RequestOptions`)
    expect(resources).not.toMatch(/pairUpload|namedUpload|OthersPairUpload/)
    expect(resources).toContain(`import { type MultipartUpload, multipartForm, type UploadOptions } from "../runtime/multipart.js"`)
  })

  it("names the method `upload` when a group has one upload", async () => {
    const one = { ...document, paths: { "/api/v1/things/{id}/files": document.paths["/api/v1/things/{id}/files"] } }
    const resources = (await renderSdk(one))["generated/resources.ts"]!
    expect(resources).toMatch(/\n  upload\(id: [^)]*upload: ThingsAddFileUpload, options\?: UploadOptions\): Promise<ThingsAddFileResponse>/)
  })

  it("produces code that type-checks, with typed upload fields", async () => {
    const files = await renderSdk(document)
    const generated = Object.fromEntries(
      Object.entries(files).filter(([path]) => path.startsWith("generated/")).map(([path, text]) => [path.slice("generated/".length), text])
    )
    const usage = `
import { SvcResources } from "./resources.js"
const client = new SvcResources({ apiKey: "k" }, {})
export const run = async () => {
  await client.things.addFile("t", { url: "https://example.com" })
  await client.things.addFile("t", new FormData())
  await client.things.addFileUpload("t", { file: new Uint8Array(1), fileName: "a.pdf", label: undefined }, { onProgress: ({ sent, total, attempt }) => sent + total + attempt })
  await client.things.addPictureUpload("t", { picture: new Blob([]) })
  // @ts-expect-error the file must be bytes or a Blob
  await client.things.addFileUpload("t", { file: "text" })
  // @ts-expect-error unknown form field
  await client.things.addFileUpload("t", { file: new Uint8Array(1), colour: "red" })
}
`
    expect(typeCheck(generated, usage)).toEqual([])
  })
})
