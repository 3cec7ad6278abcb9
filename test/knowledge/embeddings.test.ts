/**
 * Hybrid search's vectors through a real server on a temp database (both backends) and a local
 * fake embedding endpoint on a real socket: vectors stored at ingestion in batches, retried after
 * 500s, caught up after the endpoint was down (ingestion itself never waits for it) and after a
 * restart, dropped with their passages; the nearest passages to a query that shares no word with
 * them, restricted to the organization, its ready enabled sources and the Knowledgebase asked for;
 * and `whoami` saying how search retrieves.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EmbeddingConfig, type EmbeddingSettings } from "../../server/knowledge/embeddings/config.js"
import { PassageVectorRepo } from "../../server/knowledge/embeddings/repo.js"
import { VectorSearch } from "../../server/knowledge/embeddings/vector-search.js"
import { unitVector, vectorOf } from "../../server/knowledge/embeddings/vector.js"
import { call, connect, personalKey } from "../support/mcp.js"
import { fakeDimensions, fakeVector, type FakeEmbeddings, startFakeEmbeddings } from "../support/fake-embeddings.js"
import { organizationId, sql } from "../support/fixtures.js"
import { testBackend } from "../support/postgres.js"
import { dropTestDatabase, startTestServer, type TestServer } from "../support/server.js"
import { readySource } from "../support/sources.js"
import { sleep } from "../support/timing.js"

const model = "fake-embed"
let fake: FakeEmbeddings
let server: TestServer

const settingsFor = (fakeServer: FakeEmbeddings): Partial<EmbeddingSettings> => ({
  model,
  baseUrl: fakeServer.baseUrl,
  apiKey: "sk-fake",
  batchSize: 4,
  backoffMs: 5,
  pollMs: 20,
  failurePauseMs: 40
})


const until = async <A>(what: string, read: () => Promise<A>, done: (value: A) => boolean, timeoutMs = 15_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`)
    await sleep(25)
  }
}

interface Row {
  readonly id: number
  readonly source_id: string
  readonly text: string
  readonly name: string
  readonly section: string | null
}

/** Every passage of a source with its stored vector (null when it has none yet). */
const passagesOf = (target: TestServer, sourceId: string) =>
  sql(target, (db: SqlClient.SqlClient) =>
    db<Row & { model: string | null; dimensions: number | null; vector: Uint8Array | null; organization_id: string | null }>`
      SELECT p.id, p.source_id, p.text, s.name, p.section, v.model, v.dimensions, v.vector, v.organization_id
      FROM passages p JOIN sources s ON s.id = p.source_id LEFT JOIN passage_vectors v ON v.passage_id = p.id
      WHERE p.source_id = ${sourceId} ORDER BY p.seq`
  ).then((rows) => rows.map((row) => ({ ...row, id: Number(row.id) })))

const vectorCount = (target: TestServer) =>
  sql(target, (db: SqlClient.SqlClient) => db<{ n: number }>`SELECT COUNT(*) AS n FROM passage_vectors`).then((rows) => Number(rows[0]!.n))

const allEmbedded = (target: TestServer, sourceId: string) =>
  until(`vectors of ${sourceId}`, () => passagesOf(target, sourceId), (rows) => rows.length > 0 && rows.every((row) => row.vector !== null))

const createKb = async (target: TestServer, name: string, key?: string): Promise<string> => {
  const response = await target.request("POST", "/knowledgebases", { body: { name }, ...(key === undefined ? {} : { key }) })
  expect(response.status).toBe(201)
  return response.body.knowledgebase.id
}

/** Runs `VectorSearch` over the server's database with the embedding settings the server runs with. */
const nearest = (target: TestServer, fakeServer: FakeEmbeddings, organization: string, knowledgebaseId: string | null, query: string, k = 5) =>
  target.admin(
    Effect.flatMap(VectorSearch, (vectors) => vectors.nearestPassages(organization, knowledgebaseId, query, k)).pipe(
      Effect.provide(
        VectorSearch.DefaultWithoutDependencies.pipe(
          Layer.provide(PassageVectorRepo.DefaultWithoutDependencies),
          Layer.provide(EmbeddingConfig.layer(settingsFor(fakeServer)))
        )
      )
    )
  )

/** Several paragraphs, so one source makes several passages. */
const longText = (topic: string, paragraphs: number) =>
  Array.from({ length: paragraphs }, (_, i) => `Paragraph ${i + 1} about ${topic}. ${`The ${topic} notes continue with detail number ${i + 1}. `.repeat(16)}`).join("\n\n")

beforeAll(async () => {
  fake = await startFakeEmbeddings()
  server = await startTestServer({ server: { embedding: settingsFor(fake) } })
})

afterAll(async () => {
  await server?.stop()
  await fake?.close()
})

describe("passage vectors at ingestion", () => {
  it("embeds every passage once, in batches of batchSize, with the model, the key and unit float32 vectors", async () => {
    const kb = await createKb(server, "Batches")
    const before = fake.requests.length
    const source = await readySource(server, kb, { name: "Handbook", text: longText("shipping", 9) })
    const rows = await allEmbedded(server, source.id)
    expect(rows.length).toBeGreaterThan(4)
    const seen = fake.requests.slice(before)
    expect(seen.every((request) => request.status === 200 && request.model === model)).toBe(true)
    expect(seen.every((request) => request.headers.authorization === "Bearer sk-fake")).toBe(true)
    expect(seen.map((request) => request.input.length)).toEqual(
      Array.from({ length: Math.ceil(rows.length / 4) }, (_, i) => Math.min(4, rows.length - i * 4))
    )
    const inputs = seen.flatMap((request) => request.input)
    const expectedInputs = rows.map((row) => `${[row.name, row.section].filter((part) => part !== null && part !== "").join(" — ")}\n\n${row.text}`)
    expect(inputs).toEqual(expectedInputs)
    const orgId = await organizationId(server)
    for (const [i, row] of rows.entries()) {
      expect({ model: row.model, dimensions: Number(row.dimensions), bytes: row.vector!.byteLength, organization: row.organization_id }).toEqual({
        model,
        dimensions: fakeDimensions,
        bytes: fakeDimensions * 4,
        organization: orgId
      })
      expect([...vectorOf(new Uint8Array(row.vector!))]).toEqual([...unitVector(fakeVector(expectedInputs[i]!))])
    }
  })

  it("retries a batch after 500s and stores what the retry answered", async () => {
    const kb = await createKb(server, "Retries")
    const before = fake.requests.length
    fake.failNext(2, 500)
    const source = await readySource(server, kb, { name: "Retry me", text: "Customs forms are needed for parcels leaving the union." })
    const rows = await allEmbedded(server, source.id)
    expect(rows).toHaveLength(1)
    expect(fake.requests.slice(before).map((request) => request.status)).toEqual([500, 500, 200])
    expect(fake.requests.slice(before).every((request) => request.input.length === 1 && request.input[0] === `Retry me\n\n${rows[0]!.text}`)).toBe(true)
  })

  it("indexes a source while the endpoint is down (lexical search finds it) and embeds it once the endpoint is back", async () => {
    const kb = await createKb(server, "Down")
    fake.setDown(true)
    try {
      const before = fake.requests.length
      const source = await readySource(server, kb, { name: "Outage", text: "Warranty claims need the original receipt." })
      await until("failed attempts", () => Promise.resolve(fake.requests.slice(before).filter((request) => request.status === 503).length), (n) => n >= 8)
      expect((await passagesOf(server, source.id)).map((row) => row.vector)).toEqual([null])
      const search = await server.request("POST", `/knowledgebases/${kb}/search`, { body: { query: "warranty receipt", kinds: ["documents"] } })
      expect(search.status).toBe(200)
      expect(JSON.stringify(search.body)).toContain(source.id)
      fake.setDown(false)
      const rows = await allEmbedded(server, source.id)
      expect(rows[0]!.model).toBe(model)
    } finally {
      fake.setDown(false)
    }
  })

  it("drops a passage's vector with the passage", async () => {
    const kb = await createKb(server, "Deletes")
    const source = await readySource(server, kb, { name: "Short lived", text: "Returns are accepted within thirty days." })
    const [row] = await allEmbedded(server, source.id)
    await sql(server, (db: SqlClient.SqlClient) => db`DELETE FROM sources WHERE id = ${source.id}`)
    const left = await sql(server, (db: SqlClient.SqlClient) => db<{ n: number }>`SELECT COUNT(*) AS n FROM passage_vectors WHERE passage_id = ${row!.id}`)
    expect(Number(left[0]!.n)).toBe(0)
  })
})

describe("resuming after a restart", () => {
  it("embeds passages a stopped server left without vectors once a server runs again", async () => {
    const own = await startFakeEmbeddings()
    const dataDir = mkdtempSync(join(tmpdir(), "svc-embeddings-"))
    try {
      own.setDown(true)
      const first = await startTestServer({ dataDir, server: { embedding: settingsFor(own) } })
      const kb = await createKb(first, "Restart")
      const source = await readySource(first, kb, { name: "Left behind", text: longText("returns", 3) })
      await until("attempts while down", () => Promise.resolve(own.requests.length), (n) => n >= 4)
      expect((await passagesOf(first, source.id)).length).toBeGreaterThan(1)
      expect(await vectorCount(first)).toBe(0)
      await first.stop()
      // A request written just before the stop may reach the fake a moment after it: let it land.
      await sleep(50)
      const stoppedAt = own.requests.length
      await sleep(200)
      expect(own.requests.length).toBe(stoppedAt)

      own.setDown(false)
      const second = await startTestServer({ dataDir, key: first.key, server: { embedding: settingsFor(own) } })
      try {
        const rows = await allEmbedded(second, source.id)
        expect(rows.every((row) => row.model === model)).toBe(true)
        expect(own.embeddedInputs()).toHaveLength(rows.length)
      } finally {
        await second.stop()
      }
    } finally {
      await own.close()
      rmSync(dataDir, { recursive: true, force: true })
      await dropTestDatabase(dataDir)
    }
  })
})

describe("nearest passages", () => {
  let kb: string
  let otherKb: string
  let car: string
  let garden: string
  let orgId: string

  beforeAll(async () => {
    orgId = await organizationId(server)
    kb = await createKb(server, "Semantic")
    otherKb = await createKb(server, "Elsewhere")
    car = (await readySource(server, kb, { name: "Garage notes", text: "Automobile maintenance: change the engine oil twice a year." })).id
    garden = (await readySource(server, kb, { name: "Garden notes", text: "Water the tomatoes early in the morning." })).id
    await readySource(server, otherKb, { name: "Fleet", text: "Vehicle servicing schedule for the delivery vans." })
    for (const id of [car, garden]) await allEmbedded(server, id)
  })

  it("finds the passage about the same thing in other words, first, where lexical search finds nothing", async () => {
    // No word of "car upkeep" is in the car passage: its vector alone brings it, first, into the fused answer.
    const hybrid = await server.request("POST", `/knowledgebases/${kb}/search`, { body: { query: "car upkeep", kinds: ["documents"] } })
    expect(hybrid.status).toBe(200)
    expect(hybrid.body.retrieval).toBe("hybrid")
    expect(hybrid.body.results.map((hit: { citation: { sourceId: string } }) => hit.citation.sourceId)).toEqual([car])
    expect(hybrid.body.results[0].score).toBe(Math.round(10_000 / 61) / 10_000)
    const [carPassage] = await passagesOf(server, car)
    const [gardenPassage] = await passagesOf(server, garden)
    const found = await nearest(server, fake, orgId, kb, "car upkeep")
    expect(found.map((hit) => hit.passageId)).toEqual([carPassage!.id, gardenPassage!.id])
    expect(found[0]!.similarity).toBeGreaterThan(0.3)
    expect(found[1]!.similarity).toBeCloseTo(0, 5)
    const method = await server.admin(
      Effect.map(PassageVectorRepo, (repo) => repo.scanMethod).pipe(
        Effect.provide(PassageVectorRepo.DefaultWithoutDependencies.pipe(Layer.provide(EmbeddingConfig.layer(settingsFor(fake)))))
      )
    )
    expect(method).toBe(testBackend() === "pg" ? "exact-scan" : "sqlite-vec")
  })

  it("ranks the same with the exact scan in JavaScript as with sqlite-vec", async () => {
    const scanned = await server.admin(
      Effect.flatMap(VectorSearch, (vectors) =>
        Effect.map(vectors.nearestPassages(orgId, kb, "car upkeep", 5), (hits) => ({ method: vectors.scanMethod, hits }))
      ).pipe(
        Effect.provide(
          VectorSearch.DefaultWithoutDependencies.pipe(
            Layer.provide(PassageVectorRepo.DefaultWithoutDependencies),
            Layer.provide(EmbeddingConfig.layer({ ...settingsFor(fake), sqliteVec: false }))
          )
        )
      )
    )
    const withDefault = await nearest(server, fake, orgId, kb, "car upkeep")
    expect(scanned.method).toBe("exact-scan")
    expect(scanned.hits.map((hit) => hit.passageId)).toEqual(withDefault.map((hit) => hit.passageId))
    scanned.hits.forEach((hit, i) => expect(hit.similarity).toBeCloseTo(withDefault[i]!.similarity, 5))
  })

  it("keeps to the Knowledgebase asked for, spans the organization without one, and skips disabled sources", async () => {
    const inKb = await nearest(server, fake, orgId, kb, "vehicle servicing", 50)
    const fleetSources = await sql(server, (db: SqlClient.SqlClient) => db<{ id: string }>`SELECT id FROM sources WHERE name = 'Fleet'`)
    const fleet = await allEmbedded(server, fleetSources[0]!.id)
    expect(inKb.map((hit) => hit.passageId)).not.toContain(fleet[0]!.id)
    const everywhere = await nearest(server, fake, orgId, null, "vehicle servicing", 50)
    expect(everywhere[0]!.passageId).toBe(fleet[0]!.id)
    await sql(server, (db: SqlClient.SqlClient) => db`UPDATE sources SET disabled = 1 WHERE id = ${fleetSources[0]!.id}`)
    try {
      expect((await nearest(server, fake, orgId, null, "vehicle servicing", 50)).map((hit) => hit.passageId)).not.toContain(fleet[0]!.id)
    } finally {
      await sql(server, (db: SqlClient.SqlClient) => db`UPDATE sources SET disabled = 0 WHERE id = ${fleetSources[0]!.id}`)
    }
  })

  it("never answers another organization's passages", async () => {
    const otherKey = await server.createOrganization("neighbour")
    const otherOrg = await organizationId(server, "neighbour")
    const theirKb = await createKb(server, "Their garage", otherKey)
    const theirs = await readySource(server, theirKb, { name: "Their car", text: "Automobile maintenance log of the neighbour.", key: otherKey })
    const [theirPassage] = await allEmbedded(server, theirs.id)
    const ours = await nearest(server, fake, orgId, null, "car upkeep", 100)
    expect(ours.length).toBeGreaterThan(0)
    expect(ours.map((hit) => hit.passageId)).not.toContain(theirPassage!.id)
    const theirHits = await nearest(server, fake, otherOrg, null, "car upkeep", 100)
    expect(theirHits.map((hit) => hit.passageId)).toEqual([theirPassage!.id])
    expect(await nearest(server, fake, otherOrg, kb, "car upkeep", 100)).toEqual([])
  })

  it("embeds a repeated query once while it is cached, and answers nothing for a blank query", async () => {
    const before = fake.requests.length
    await nearest(server, fake, orgId, kb, "tomato watering")
    const first = fake.requests.length
    expect(first - before).toBe(1)
    expect(await nearest(server, fake, orgId, kb, "   ")).toEqual([])
    expect(fake.requests.length).toBe(first)
  })
})

describe("whoami", () => {
  it("says hybrid with the embedding model when one is configured", async () => {
    const key = await personalKey(server, "hybrid@example.com", "member")
    const client = await connect(server, key)
    try {
      expect((await call(client, "whoami")).body.retrieval).toEqual({ mode: "hybrid", embeddingModel: model })
    } finally {
      await client.close()
    }
  })

  it("says lexical with no embedding model", async () => {
    const lexical = await startTestServer()
    try {
      const key = await personalKey(lexical, "lexical@example.com", "member")
      const client = await connect(lexical, key)
      try {
        expect((await call(client, "whoami")).body.retrieval).toEqual({ mode: "lexical", embeddingModel: null })
      } finally {
        await client.close()
      }
    } finally {
      await lexical.stop()
    }
  })
})
