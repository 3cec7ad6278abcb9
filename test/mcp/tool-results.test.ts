/** Tool results: values as JSON, expected failures as the REST envelope, defects as `server_error`. */
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { NotFound } from "../../server/platform/errors.js"
import { resultOfExit, toolEffect } from "../../server/mcp-door/tool.js"
import { camelName, mapLegacyMessage } from "../../server/mcp-door/names.js"

describe("tool results", () => {
  it("answers a value as structuredContent and as the same JSON text", () => {
    const { result } = resultOfExit(Exit.succeed({ ok: true, missing: undefined }))
    expect(result).toEqual({ content: [{ type: "text", text: '{"ok":true}' }], structuredContent: { ok: true, missing: undefined } })
    expect(JSON.stringify(result.structuredContent)).toBe('{"ok":true}')
  })

  it("answers an expected failure with isError and the REST envelope", () => {
    const { result, defect } = resultOfExit(Exit.fail(new NotFound({ message: "No page x." })))
    expect(result).toEqual({ isError: true, content: [{ type: "text", text: '{"error":{"code":"not_found","message":"No page x."}}' }] })
    expect("structuredContent" in result).toBe(false)
    expect(defect).toBeNull()
  })

  it("turns a defect into server_error without details, and never fails", async () => {
    const result = await Effect.runPromise(toolEffect(Effect.die(new Error("secret internals")), "broken"))
    expect(result.isError).toBe(true)
    const text = (result.content[0] as { text: string }).text
    expect(JSON.parse(text).error.code).toBe("server_error")
    expect(text).not.toContain("secret")
  })

  it("answers PostgreSQL's refusal of text holding U+0000 as invalid_request, as REST does", () => {
    const refused = new SqlError({ cause: Object.assign(new Error("invalid byte sequence for encoding \"UTF8\": 0x00"), { code: "22021" }), message: "Failed to execute statement" })
    const { result, defect } = resultOfExit(Exit.die(refused))
    expect(result).toEqual({
      isError: true,
      content: [{ type: "text", text: '{"error":{"code":"invalid_request","message":"Text may not contain the NUL character (U+0000)."}}' }]
    })
    expect(defect).toBeNull()
    const other = resultOfExit(Exit.die(new SqlError({ cause: Object.assign(new Error("disk I/O"), { code: "58030" }), message: "x" })))
    expect(JSON.parse((other.result.content[0] as { text: string }).text).error.code).toBe("server_error")
  })
})

describe("old spellings", () => {
  it("maps old tool names and snake_case arguments, but not a Flow tool's parameters", () => {
    expect(camelName("knowledge_base_id")).toBe("knowledgeBaseId")
    const message = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "update_agent", arguments: { agent_id: "a", flow_ids: ["f"], agentId: "kept" } } }
    expect(mapLegacyMessage(message, () => false).params).toEqual({ name: "save_agent", arguments: { agentId: "kept", flowIds: ["f"] } })
    const flow = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "flow_greeter", arguments: { company_name: "Acme" } } }
    expect(mapLegacyMessage(flow, (name) => name.startsWith("flow_")).params.arguments).toEqual({ company_name: "Acme" })
  })
})
