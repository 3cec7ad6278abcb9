/** The MCP address a command line names with `--url`: an http(s) URL, or bad usage naming the value. */
import { usage } from "./errors.js"

/** Parses `--url`; a value that is not an http(s) URL is bad usage (exit 2) that names it. */
export const parseMcpUrl = (url: string): URL => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw usage(`--url '${url}' is not a URL (like http://127.0.0.1:8787/mcp).`)
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw usage(`--url '${url}' is not an http(s) URL.`)
  return parsed
}
