/**
 * Greedy shrinking of a failing request: drops headers, query parameters and body properties and
 * shortens strings while the request still fails, so the reproduction printed is small.
 */
import type { SoakAnswer, SoakClient, SoakRequest } from "./http.js"

const candidates = (request: SoakRequest): Array<SoakRequest> => {
  const out: Array<SoakRequest> = []
  for (const name of Object.keys(request.headers ?? {})) {
    const headers = { ...request.headers }
    delete headers[name]
    out.push({ ...request, headers })
  }
  const [path, query] = request.path.split("?", 2) as [string, string | undefined]
  if (query !== undefined) {
    const pairs = query.split("&")
    out.push({ ...request, path })
    pairs.forEach((_, i) => out.push({ ...request, path: `${path}?${pairs.filter((__, j) => j !== i).join("&")}` }))
  }
  if (typeof request.body === "string") {
    if (request.body.length > 0) out.push({ ...request, body: undefined })
    let parsed: unknown
    try {
      parsed = JSON.parse(request.body)
    } catch {
      parsed = undefined
    }
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
      for (const key of Object.keys(parsed)) {
        const rest: Record<string, unknown> = { ...(parsed as Record<string, unknown>) }
        delete rest[key]
        out.push({ ...request, body: JSON.stringify(rest) })
        const value = (parsed as Record<string, unknown>)[key]
        if (typeof value === "string" && value.length > 1) out.push({ ...request, body: JSON.stringify({ ...parsed, [key]: value.slice(0, value.length >> 1) }) })
        if (Array.isArray(value) && value.length > 1) out.push({ ...request, body: JSON.stringify({ ...parsed, [key]: value.slice(0, 1) }) })
      }
    } else if (request.body.length > 1) {
      out.push({ ...request, body: request.body.slice(0, request.body.length >> 1) })
    }
  }
  return out
}

/** The smallest variant of `request` found (at most `budget` tries) for which `fails` still holds. */
export const minimize = async (
  client: SoakClient,
  request: SoakRequest,
  fails: (request: SoakRequest, answer: SoakAnswer) => boolean,
  budget = 300
): Promise<SoakRequest> => {
  let current = request
  let tries = 0
  for (let progress = true; progress && tries < budget; ) {
    progress = false
    for (const candidate of candidates(current)) {
      if (++tries > budget) break
      if (fails(candidate, await client.send(candidate))) {
        current = candidate
        progress = true
        break
      }
    }
  }
  return current
}

/** A request as one line to reproduce it with curl. */
export const describeRequest = (request: SoakRequest): string => {
  const headers = Object.entries(request.headers ?? {})
    .map(([name, value]) => `-H ${JSON.stringify(`${name}: ${value.length > 80 ? `${value.slice(0, 80)}…(${value.length})` : value}`)}`)
    .join(" ")
  const body = request.body === undefined ? "" : request.body instanceof Uint8Array ? Buffer.from(request.body).toString("latin1") : String(request.body)
  const shown = body.length > 300 ? `${JSON.stringify(body.slice(0, 300))} …(${body.length} characters)` : JSON.stringify(body)
  return `curl -X ${request.method} ${headers} ${body === "" ? "" : `--data-raw ${shown} `}'$ORIGIN${request.path}'`
}
