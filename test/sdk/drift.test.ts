import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { generatedMarker, generateSdk } from "../../scripts/generate-sdk.js"

const sdkDir = fileURLToPath(new URL("../../sdk/", import.meta.url))
const hint = "the checked-in SDK is out of date: run npm run sdk:generate"

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [relative(sdkDir, path).split("\\").join("/")]
  })

const looksGenerated = (path: string): boolean => {
  const text = readFileSync(join(sdkDir, path), "utf8")
  return path.startsWith("generated/") || text.startsWith(generatedMarker) || /^\{\s*"x-generated"/.test(text)
}

describe("generated SDK files", () => {
  it("match what the generator produces from the current API", async () => {
    const files = await generateSdk()
    const problems = Object.entries(files).flatMap(([path, contents]) => {
      const target = join(sdkDir, path)
      if (!existsSync(target)) return [`sdk/${path} is missing`]
      return readFileSync(target, "utf8") === contents ? [] : [`sdk/${path} differs from the generator's output`]
    })
    for (const path of filesUnder(sdkDir)) {
      if (looksGenerated(path) && !(path in files)) problems.push(`sdk/${path} is generated but no longer produced`)
    }
    expect(problems, hint).toEqual([])
  })

  it("start with a generated-file notice", async () => {
    for (const [path, contents] of Object.entries(await generateSdk())) {
      if (path.endsWith(".ts")) expect(contents.split("\n")[0]).toBe(generatedMarker)
      else expect(Object.keys(JSON.parse(contents))[0]).toBe("x-generated")
    }
  })

  it("describe a valid OpenAPI document", async () => {
    const { validate } = await import("@readme/openapi-parser")
    const document = JSON.parse(readFileSync(join(sdkDir, "openapi.json"), "utf8"))
    const result = await validate(document)
    expect(result.valid, JSON.stringify(result, null, 2)).toBe(true)
  })
})
