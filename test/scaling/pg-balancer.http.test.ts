/**
 * The load balancer of the benchmarks of several instances (bench/balancer.ts, issue 24) in front
 * of two svc instances on one PostgreSQL database: requests go to the instances in turn whatever
 * connection they come on (no stickiness), each instance's own request log shows what it served,
 * and a request refused by a stopped instance goes to the other one, answered once. The balancer
 * runs as the bench runs it, from dist/ (npm run build first). (pg project only.)
 */
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Pool } from "undici"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Child, spawnChild } from "../../bench/children.js"
import type { BalancerReady } from "../../bench/instances-protocol.js"
import { balancerCounts } from "../../bench/instances.js"
import { createTestDatabase } from "../support/postgres.js"
import { startTestServer, type TestServer } from "../support/server.js"

const repoRoot = fileURLToPath(new URL("../..", import.meta.url))

let database: { readonly url: string; readonly drop: () => Promise<void> }
let instances: Array<TestServer> = []
/** Each instance's request log: method and path of every request it answered, and the status. */
const logs: Array<Array<{ method: string; path: string; status: number }>> = [[], []]
let balancer: Child<BalancerReady>
/** One keep-alive connection to the balancer: every request of a test on the same connection. */
let client: Pool

beforeAll(async () => {
  database = await createTestDatabase()
  const requestLog = (n: number) => ({
    format: "json" as const,
    write: (line: string) => {
      const { method, path, status } = JSON.parse(line) as { method: string; path: string; status: number }
      logs[n]!.push({ method, path, status })
    }
  })
  const first = await startTestServer({ server: { database: database.url, requestLog: requestLog(0) } })
  const second = await startTestServer({ key: first.key, server: { database: database.url, requestLog: requestLog(1) } })
  instances = [first, second]
  balancer = await spawnChild<BalancerReady>({
    name: "balancer",
    script: join(repoRoot, "dist", "bench", "balancer.js"),
    args: ["--target", first.origin, "--target", second.origin],
    logFile: "/dev/null"
  })
  client = new Pool(balancer.ready.origin, { connections: 1, pipelining: 1 })
})

afterAll(async () => {
  await client?.close()
  await balancer?.stop()
  for (const instance of instances) await instance.stop()
  await database?.drop()
})

/** Sends one request through the balancer with the organization key. */
const send = async (method: "GET" | "POST", path: string, body?: unknown) => {
  const response = await client.request({
    method,
    path: `/api/v1${path}`,
    headers: { authorization: `Bearer ${instances[0]!.key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? null : JSON.stringify(body)
  })
  return { status: response.statusCode, body: (await response.body.json()) as any }
}

const served = (n: number, path: string) => logs[n]!.filter((entry) => entry.path.startsWith(`/api/v1${path}`))

describe("the bench's balancer in front of two instances", () => {
  it("sends the requests of one connection to the instances in turn, each seeing the other's writes", async () => {
    const made = await send("POST", "/knowledgebases", { name: "Balanced" })
    expect(made.status).toBe(201)
    const id = made.body.knowledgebase.id as string
    for (let i = 0; i < 7; i++) {
      const read = await send("GET", `/knowledgebases/${id}`)
      expect(read).toMatchObject({ status: 200, body: { knowledgebase: { id, name: "Balanced" } } })
    }
    // The create to the first instance, then the reads alternating from the second.
    expect(served(0, "/knowledgebases").map((entry) => `${entry.method} ${entry.status}`)).toEqual(["POST 201", "GET 200", "GET 200", "GET 200"])
    expect(served(1, "/knowledgebases").map((entry) => `${entry.method} ${entry.status}`)).toEqual(["GET 200", "GET 200", "GET 200", "GET 200"])
    expect(await balancerCounts(balancer)).toEqual([4, 4])
  })

  it("sends a request the stopped instance refuses to the other one, each create made once", async () => {
    await instances.pop()!.stop()
    const before = served(0, "/knowledgebases").length
    const names = ["After stop 1", "After stop 2", "After stop 3", "After stop 4"]
    for (const name of names) expect((await send("POST", "/knowledgebases", { name })).status).toBe(201)
    const listed = await send("GET", "/knowledgebases?limit=50")
    expect(listed.status).toBe(200)
    const listedNames = (listed.body.knowledgebases as Array<{ name: string }>).map((kb) => kb.name).sort()
    expect(listedNames).toEqual(["After stop 1", "After stop 2", "After stop 3", "After stop 4", "Balanced"])
    // Every one of them answered by the first instance, once.
    expect(served(0, "/knowledgebases").slice(before).map((entry) => `${entry.method} ${entry.status}`)).toEqual([
      "POST 201",
      "POST 201",
      "POST 201",
      "POST 201",
      "GET 200"
    ])
    expect(served(1, "/knowledgebases")).toHaveLength(4)
  })
})
