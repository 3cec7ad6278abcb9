/** HTTP handlers of the source endpoints: thin adapters over `SourceService`. */
import { type HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { SourcesContract } from "./api.js"
import { InvalidRequest } from "../../platform/errors.js"
import { CurrentPrincipal } from "../../http/authentication.js"
import { maxRequestBodyBytes } from "../../http/limits.js"
import { readMultipart } from "../../http/multipart.js"
import { decodeBody } from "../../platform/request/decode.js"
import { readJsonBody } from "../../http/request-body.js"
import { declaredAnswer, idempotentCreate } from "../../http/responses.js"
import { parseFields, project } from "../../platform/pagination.js"
import { detectType } from "./extract.js"
import { CreateSourceJson, sourceFields, uploadTypes } from "./domain.js"
import { SourceService, type UploadInput } from "./service.js"
import { serveGroup } from "../../http/served-groups.js"

const uploadLimits = { maxParts: 8, maxFieldBytes: 16_000, maxFileBytes: maxRequestBodyBytes, maxTotalBytes: maxRequestBodyBytes }
const formFields = new Set(["file", "name", "parentPageId"])

/** An upload sent as `multipart/form-data`: one `file` part and optional `name` and `parentPageId`. */
const uploadFromForm = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    const form = yield* readMultipart(request, uploadLimits)
    const unknown = [...form.fields.keys(), ...form.files.map((file) => file.field)].filter((key) => !formFields.has(key))
    if (unknown.length > 0) return yield* new InvalidRequest({ message: `Unknown form fields: ${unknown.join(", ")}.` })
    if (form.fields.has("file")) return yield* new InvalidRequest({ message: "file: send the document as a file part, not a text field." })
    const file = form.files.find((part) => part.field === "file")
    if (!file) return yield* new InvalidRequest({ message: "file: a file part is required." })
    const type = detectType(file.name, file.contentType)
    if (type === null || !(uploadTypes as ReadonlyArray<string>).includes(type)) {
      return yield* new InvalidRequest({ message: `file: '${file.name}' is not a PDF, CSV, TXT or MD file.` })
    }
    if (file.bytes.byteLength === 0) return yield* new InvalidRequest({ message: "file: the file is empty." })
    const name = (form.fields.get("name") ?? file.name).trim()
    if (name.length === 0 || name.length > 200) return yield* new InvalidRequest({ message: "name: must be 1 to 200 characters." })
    const parent = form.fields.get("parentPageId")?.trim()
    const upload: UploadInput = {
      name,
      parentPageId: parent === undefined || parent === "" || parent === "null" ? null : parent,
      content: { kind: "file", type, bytes: file.bytes, contentType: file.contentType },
      createdVia: "api"
    }
    const fingerprint = {
      name,
      parentPageId: upload.parentPageId,
      file: { name: file.name, sha256: createHash("sha256").update(file.bytes).digest("hex") }
    }
    return { upload, fingerprint }
  })

/** An accepted upload as `create` declares it (stored for idempotent replays). */
const createdSource = declaredAnswer(SourcesContract.groups["sources"]!.endpoints["create"]!.successSchema)

/** Handlers of the `sources` group. */
export const SourcesHttpLive = serveGroup(SourcesContract, "sources", (handlers) =>
  Effect.gen(function* () {
    const sources = yield* SourceService
    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const fields = yield* parseFields(urlParams.fields, sourceFields)
          const page = yield* sources.list(yield* CurrentPrincipal, path.id, urlParams)
          return {
            knowledgebaseId: path.id,
            sources: page.items.map((source) => project(source, fields)),
            nextCursor: page.nextCursor
          }
        })
      )
      .handleRaw("create", ({ path, headers, request }) =>
        Effect.gen(function* () {
          const actor = yield* CurrentPrincipal
          const contentType = (request.headers["content-type"] ?? "application/json").toLowerCase()
          let received: { upload: UploadInput; fingerprint: unknown }
          if (contentType.startsWith("multipart/form-data")) {
            received = yield* uploadFromForm(request)
          } else if (contentType.includes("json")) {
            const raw = yield* readJsonBody(request)
            const body = yield* decodeBody(CreateSourceJson)(raw)
            received = { upload: yield* sources.fromJson(body, "api"), fingerprint: raw }
          } else {
            return yield* new InvalidRequest({ message: "Send the source as application/json or as multipart/form-data." })
          }
          return yield* idempotentCreate(
            { key: headers["idempotency-key"], request, payload: received.fingerprint },
            {
              prepare: sources.prepare(actor, path.id, received.upload),
              write: (prepared) => sources.write(actor, prepared),
              committed: sources.wakeWorker
            },
            createdSource
          )
        })
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          return { source: yield* sources.get(yield* CurrentPrincipal, path.id, path.sourceId) }
        })
      )
      .handle("move", ({ path, payload }) =>
        Effect.gen(function* () {
          const source = yield* sources.move(yield* CurrentPrincipal, path.id, path.sourceId, payload.parentPageId)
          return { ok: true as const, source }
        })
      )
  })
)
