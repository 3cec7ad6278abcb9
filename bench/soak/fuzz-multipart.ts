/**
 * Multipart bodies for the operations that take `multipart/form-data` (source uploads): a file
 * part and text fields with odd filenames, part headers, content types and bytes (PDF, ZIP, CSV,
 * HTML and random), sometimes cut short or with a wrong boundary.
 */
import fc from "fast-check"
import { oddString } from "./schema-arbitrary.js"

/** One multipart body as bytes, with the content type naming its boundary. */
export interface MultipartBody {
  readonly contentType: string
  readonly body: Uint8Array
}

const fileBytes = fc.oneof(
  fc.uint8Array({ maxLength: 2_000 }),
  fc.constantFrom("%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF", "%PDF-", "PK\u0003\u0004garbage", "a,b\n1,2\n\"unterminated", "<html><body><p>Hi", "\uFEFF# Title\n\nBody").map((text) => new TextEncoder().encode(text)),
  fc.string({ unit: "grapheme", maxLength: 400 }).map((text) => new TextEncoder().encode(text))
)

const filename = fc.oneof(
  fc.constantFrom("notes.txt", "report.pdf", "data.csv", "page.html", "archive.zip", "README.md", "", "../../etc/passwd", "a\"b.txt", "résumé.txt", "x".repeat(600) + ".txt", "noextension", ".hidden", "file.PDF"),
  oddString.map((s) => s.slice(0, 200))
)

const partContentType = fc.constantFrom(
  "text/plain", "application/pdf", "text/csv", "text/html", "text/markdown", "application/zip", "application/octet-stream", "image/png", "", "text/plain; charset=utf-16", "nonsense"
)

/** The arbitrary of multipart bodies (`ids` fill `parentPageId` now and then). */
export const multipartBodies = (ids: ReadonlyArray<string>): fc.Arbitrary<MultipartBody> =>
  fc
    .record({
      boundary: fc.oneof(fc.constant("soakboundary"), fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 70 }).filter((b) => !/[\r\n"]/.test(b))),
      filename,
      useFilenameStar: fc.boolean(),
      contentType: partContentType,
      bytes: fileBytes,
      name: fc.option(oddString.map((s) => s.slice(0, 300)), { nil: undefined }),
      parentPageId: fc.option(fc.constantFrom(...ids, "not-a-uuid"), { nil: undefined }),
      extraField: fc.option(fc.tuple(fc.constantFrom("file", "contentText", "unknown", ""), fc.string({ maxLength: 30 })), { nil: undefined }),
      ending: fc.constantFrom("whole", "whole", "whole", "no closing delimiter", "cut", "wrong boundary in header", "no blank line")
    })
    .map((form) => {
      const encoder = new TextEncoder()
      const chunks: Array<Uint8Array> = []
      const text = (value: string) => chunks.push(encoder.encode(value))
      const field = (name: string, value: string) =>
        text(`--${form.boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      if (form.name !== undefined) field("name", form.name)
      if (form.parentPageId !== undefined) field("parentPageId", form.parentPageId)
      if (form.extraField) field(form.extraField[0], form.extraField[1])
      const disposition = form.useFilenameStar
        ? `filename*=UTF-8''${encodeURIComponent(form.filename.replace(/[\uD800-\uDFFF]/g, "?"))}`
        : `filename="${form.filename.replace(/[\r\n]/g, " ")}"`
      text(`--${form.boundary}\r\nContent-Disposition: form-data; name="file"; ${disposition}\r\n`)
      if (form.contentType !== "") text(`Content-Type: ${form.contentType}\r\n`)
      if (form.ending !== "no blank line") text("\r\n")
      chunks.push(form.bytes)
      if (form.ending !== "no closing delimiter" && form.ending !== "cut") text(`\r\n--${form.boundary}--\r\n`)
      let body = Buffer.concat(chunks)
      if (form.ending === "cut") body = body.subarray(0, Math.floor(body.length / 2))
      const boundary = form.ending === "wrong boundary in header" ? `${form.boundary}x` : form.boundary
      return { contentType: `multipart/form-data; boundary=${boundary.includes(" ") ? `"${boundary}"` : boundary}`, body }
    })
