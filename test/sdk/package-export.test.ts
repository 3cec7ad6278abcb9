/** The SDK is importable as the package's `svc-local/sdk` export (the built `dist/sdk`), as a user would. */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const repoRoot = fileURLToPath(new URL("../..", import.meta.url))

describe("svc-local/sdk", () => {
  it("resolves through the package exports to the client and its error classes", () => {
    const script = `
      const sdk = await import("svc-local/sdk")
      const svc = new sdk.Svc({ baseUrl: "http://127.0.0.1:1/api/v1", apiKey: "svco_x" })
      console.log(JSON.stringify({
        client: typeof svc.knowledgebases.list,
        notFound: new sdk.NotFoundError({ status: 404, code: "not_found", message: "m", requestId: "req_1", headers: {} }) instanceof sdk.SvcError
      }))
      await svc.close()
    `
    const output = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: repoRoot, encoding: "utf8" })
    expect(JSON.parse(output)).toEqual({ client: "function", notFound: true })
  })
})
