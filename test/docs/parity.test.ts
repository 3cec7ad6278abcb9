/**
 * docs/parity.md tells the truth about itself and about the server: its summary equals the rows
 * counted by state (in all and per part), every row has a state the legend defines, and a row that
 * names an HTTP route is served by a real server exactly when the row says it is built (`done` or
 * `partial`), per the server's own `GET /api/v1/openapi.json`.
 */
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import {
  countStates,
  normalRoute,
  paritySummary,
  parityRows,
  parityStates,
  type ParityRow,
  routeOf
} from "./parity-doc.js"

const markdown = readFileSync(new URL("../../docs/parity.md", import.meta.url), "utf8")
const rows = parityRows(markdown)
const summary = paritySummary(markdown)
const where = (row: ParityRow) => `docs/parity.md:${row.line} (${row.part}: ${row.item})`

describe("docs/parity.md summary", () => {
  it("has rows, each with a state the legend defines", () => {
    expect(rows.length).toBeGreaterThan(100)
    const unknown = rows.filter((row) => !(parityStates as ReadonlyArray<string>).includes(row.state)).map(where)
    expect(unknown).toEqual([])
  })

  it("gives the number of rows and the count of each state", () => {
    expect(summary.total).toBe(rows.length)
    expect(summary.byState).toEqual(countStates(rows))
  })

  it("gives each part's counts, for every part and no other", () => {
    const parts = [...new Set(rows.map((row) => row.part))]
    expect([...summary.byPart.keys()]).toEqual(parts)
    for (const part of parts) {
      expect(summary.byPart.get(part), part).toEqual(countStates(rows.filter((row) => row.part === part)))
    }
  })
})

describe("docs/parity.md routes", () => {
  let server: TestServer
  let served: Set<string>
  beforeAll(async () => {
    server = await startTestServer()
    const response = await server.request("GET", "/openapi.json", { key: null })
    expect(response.status).toBe(200)
    const prefix = new URL(server.baseUrl).pathname
    served = new Set([normalRoute("GET", "/openapi.json")])
    for (const [path, operations] of Object.entries(response.body.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(operations)) served.add(normalRoute(method, path.slice(prefix.length)))
    }
  })
  afterAll(() => server.stop())

  const routed = rows.flatMap((row) => {
    const route = routeOf(row.item)
    return route === null ? [] : [{ row, route }]
  })

  it("names routes in its rows", () => {
    expect(routed.length).toBeGreaterThan(50)
  })

  it("claims no route as built that the server does not serve", () => {
    const missing = routed.filter(({ row, route }) => row.state !== "not yet" && !served.has(route)).map(({ row }) => where(row))
    expect(missing).toEqual([])
  })

  it("lists no served route as not yet built", () => {
    const stale = routed.filter(({ row, route }) => row.state === "not yet" && served.has(route)).map(({ row }) => where(row))
    expect(stale).toEqual([])
  })

  it("has a row for every route the server serves", () => {
    const documented = new Set(routed.map(({ route }) => route))
    expect([...served].filter((route) => !documented.has(route))).toEqual([])
  })
})
