/**
 * The svc SDK (`svc-local/sdk`): a typed client for the External API.
 *
 * ```ts
 * import { Svc, NotFoundError } from "svc-local/sdk"
 * const svc = new Svc({ baseUrl: "http://127.0.0.1:8787/api/v1", apiKey: process.env.SVC_API_KEY })
 * const { knowledgebase } = await svc.knowledgebases.create({ name: "Handbook" })
 * for await (const kb of svc.knowledgebases.list({ limit: 20 })) console.log(kb.name)
 * const { source } = await svc.sources.upload(knowledgebase.id, { file: bytes, fileName: "notes.txt" }, {
 *   onProgress: ({ sent, total }) => console.log(`${sent} / ${total}`)
 * })
 * ```
 */
import { errorClasses } from "./generated/errors.js"
import { SvcResources } from "./generated/resources.js"
import type { components } from "./generated/schema.js"
import type { SvcOptions } from "./runtime/options.js"

/** The client: one property per resource (`svc.knowledgebases`, `svc.agents`, ...). */
export class Svc extends SvcResources {
  /** Options omitted here come from `SVC_BASE_URL` and `SVC_API_KEY`. */
  constructor(options: SvcOptions = {}) {
    super(options, errorClasses)
  }
}

/** The document's named schemas, e.g. `Schemas["Knowledgebase"]`. */
export type Schemas = components["schemas"]

export * from "./generated/errors.js"
export * from "./generated/resources.js"
export type { components, operations, paths } from "./generated/schema.js"
export { ApiClient, type ApiCall } from "./runtime/client.js"
export { SvcConnectionError, SvcError, type SvcErrorInit, SvcTimeoutError } from "./runtime/errors.js"
export { MultipartBody, type MultipartUpload, type UploadData, type UploadOptions, type UploadProgress } from "./runtime/multipart.js"
export type { RequestOptions, SvcOptions } from "./runtime/options.js"
export { type CursorPage, PagePromise } from "./runtime/pagination.js"
export type { QueryParams } from "./runtime/resource.js"
export { type SignupEvent, type VerifyWebhookOptions, verifyWebhook, type WebhookHeaders, type WebhookRefusal, type WebhookVerification } from "./runtime/webhooks.js"
export { ReplyStream, type StreamDelta, type StreamDone, type StreamEvent, type StreamStart, type StreamTool } from "./runtime/stream.js"
