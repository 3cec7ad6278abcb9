/** The generator derives streamed variants from the document: a JSON body with a boolean `stream` gets a `…Stream` method. */
import { describe, expect, it } from "vitest"
import { renderSdk } from "../../scripts/generate-sdk.js"

const ok = { description: "ok", content: { "application/json": { schema: { type: "object", properties: { reply: { type: "string" } } } } } }
const pathParam = { name: "id", in: "path", required: true, schema: { type: "string" } }
const body = (properties: object) => ({ required: true, content: { "application/json": { schema: { type: "object", properties } } } })

const document = {
  openapi: "3.1.0",
  info: { title: "fixture", version: "1" },
  paths: {
    "/api/v1/bots/{id}/talk": {
      post: { tags: ["bots"], operationId: "bots.talk", parameters: [pathParam], requestBody: body({ message: { type: "string" }, stream: { $ref: "#/components/schemas/Flag" } }), responses: { 200: ok } }
    },
    "/api/v1/bots/{id}/rename": {
      post: { tags: ["bots"], operationId: "bots.rename", parameters: [pathParam], requestBody: body({ name: { type: "string" } }), responses: { 200: ok } }
    },
    "/api/v1/bots/{id}/odd": {
      post: { tags: ["bots"], operationId: "bots.odd", parameters: [pathParam], requestBody: body({ stream: { type: "string" } }), responses: { 200: ok } }
    }
  },
  components: { schemas: { Flag: { type: "boolean" } } }
}

describe("streamed variants", () => {
  it("are generated for operations whose JSON body takes a boolean stream, and only those", async () => {
    const resources = (await renderSdk(document))["generated/resources.ts"]!
    expect(resources).toContain(`talkStream(id: operations["bots.talk"]["parameters"]["path"]["id"], body: Omit<BotsTalkBody, "stream">, options?: RequestOptions): ReplyStream<BotsTalkResponse>`)
    expect(resources).toContain("return this.client.stream<BotsTalkResponse>(")
    expect(resources).not.toContain("renameStream")
    expect(resources).not.toContain("oddStream")
    expect(resources).toContain(`import type { ReplyStream } from "../runtime/stream.js"`)
  })

  it("leave the import out when nothing streams", async () => {
    const { "/api/v1/bots/{id}/talk": _, ...paths } = document.paths
    const resources = (await renderSdk({ ...document, paths }))["generated/resources.ts"]!
    expect(resources).not.toContain("ReplyStream")
  })
})
