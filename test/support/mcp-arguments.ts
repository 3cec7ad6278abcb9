/** How an MCP tool call refused for its arguments looks through the SDK's client. */
import { expect } from "vitest"

/**
 * Asserts a call refused by the MCP SDK's input validation (the tool's published input schema, before
 * the tool runs) for one problem: an error result naming the tool, what was wrong (`detail`, e.g.
 * `<=32000 characters`) and, last, the argument (`message`, or a path such as `questions[0].label`).
 */
export const expectArgumentRefused = (result: { readonly isError: boolean; readonly body: unknown }, tool: string, argument: string, detail: string): void => {
  expect(result.isError).toBe(true)
  expect(typeof result.body).toBe("string")
  const text = result.body as string
  expect(text.startsWith(`MCP error -32602: Input validation error: Invalid arguments for tool ${tool}: `)).toBe(true)
  expect(text).toContain(detail)
  expect(text.endsWith(` at ${argument}`)).toBe(true)
}
