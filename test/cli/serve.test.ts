import { existsSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { onSqlite } from "../support/postgres.js"
import { ansi, apiGet, backendDataDir, expectEnvelope, expectFailure, freshDataDir, parseOneDocument, removeDataDirs, serve, serveProcess, slow, svc, svcJson, svcProcess } from "./helpers.js"

afterAll(removeDataDirs)

describe("svc serve", slow, () => {
  it("as a real process, prints one ready line, serves the API with the bootstrap key, and stops on SIGTERM and SIGINT", async () => {
    const dataDir = await backendDataDir()
    const first = await serveProcess(dataDir, ["--json"])
    try {
      const ready = parseOneDocument(first.stdout())
      expect(Object.keys(ready).sort()).toEqual(["baseUrl", "bootstrapKey", "dataDir", "demo", "mcpUrl", "organization"])
      expect(ready.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/)
      expect(ready.mcpUrl).toBe(ready.baseUrl.replace(/\/api\/v1$/, "/mcp"))
      expect(ready.demo).toBeNull()
      expect(ready.dataDir).toBe(dataDir)
      expect(Object.keys(ready.organization).sort()).toEqual(["id", "slug"])
      expect(ready.organization.slug).toBe("default")
      expect(ready.bootstrapKey).toMatch(/^svco_[0-9A-Za-z]{40}$/)
      const list = await apiGet(ready.baseUrl, "/knowledgebases", ready.bootstrapKey)
      expect(list.status).toBe(200)
    } finally {
      expect(await first.stop("SIGTERM")).toBe(0)
    }
    expect(first.stdout().trimEnd().split("\n")).toHaveLength(1)
    expect(existsSync(join(dataDir, "svc.sqlite"))).toBe(onSqlite)

    const second = await serveProcess(dataDir, ["--json"])
    const again = parseOneDocument(second.stdout())
    expect(again.bootstrapKey).toBeNull()
    expect(again.organization.slug).toBe("default")
    expect(await second.stop("SIGINT")).toBe(0)
  })

  // About where the data directory is: on PostgreSQL the data is not in it.
  it.runIf(onSqlite)("takes --data-dir over SVC_DATA_DIR, and valid retry delays", async () => {
    const env = freshDataDir()
    const flag = freshDataDir()
    const served = await serve(env, ["--json", "--data-dir", flag, "--webhook-retry-delays", "1,2.5,3"])
    try {
      expect(parseOneDocument(served.stdout()).dataDir).toBe(flag)
    } finally {
      expect(await served.stop()).toBe(0)
    }
    const shown = await svcJson(["orgs", "show", "default"], flag)
    expect(shown.organization.slug).toBe("default")
    expectFailure(await svc(["orgs", "show", "default"], env), 1)
  })

  it("prints a plain banner without escape sequences when stdout is not a terminal", async () => {
    const served = await serve(await backendDataDir(), [], "Ctrl+C")
    try {
      const out = served.stdout()
      expect(out).not.toMatch(ansi)
      expect(out).toMatch(/Base URL: +http:\/\/127\.0\.0\.1:\d+\/api\/v1/)
      expect(out).toMatch(/svco_[0-9A-Za-z]{40}/)
      expect(out).toContain("Store it now")
      expect(out).toMatch(/MCP URL: +http:\/\/127\.0\.0\.1:\d+\/mcp/)
    } finally {
      expect(await served.stop()).toBe(0)
    }
  })

  it("refuses a bad port or bad retry delays as usage errors", async () => {
    const runs = await Promise.all(
      [["--port", "65536"], ["--port", "http"], ["--webhook-retry-delays", "10,60"], ["--webhook-retry-delays", "10,0,300"], ["--webhook-retry-delays", "10,60,300,900"]].map(
        (args) => svc(["serve", ...args], freshDataDir())
      )
    )
    for (const run of runs) expectFailure(run, 2)
  })

  it("fails with one line when the port is taken", async () => {
    const served = await serve(await backendDataDir(), ["--json"])
    try {
      const port = new URL(parseOneDocument(served.stdout()).baseUrl).port
      const taken = await svc(["serve", "--port", port, "--json"], await backendDataDir())
      const line = expectFailure(taken, 1, true)
      expect(line).toBe(`svc: cannot start the server: 127.0.0.1:${port} is already in use; pass --port (0 picks a free port).`)
      expect(expectEnvelope(taken.stdout).code).toBe("address_in_use")
      const human = await svc(["serve", "--port", port], await backendDataDir())
      expect(expectFailure(human, 1)).not.toMatch(/ServeError/)
    } finally {
      await served.stop()
    }
  })
})

// The never-shown record is kept for a new data directory, which a server on PostgreSQL does not make.
describe.runIf(onSqlite)("a bootstrap key that was never shown", slow, () => {
  it("a later start says how to get a key, with the exact command, once", async () => {
    const dataDir = freshDataDir()
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve))
    const address = blocker.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    try {
      // The first start makes organization default and its key, then cannot listen: the key is never printed.
      const failed = await svcProcess(["serve", "--port", String(port)], dataDir)
      expect(expectFailure(failed, 1)).toMatch(/already in use/)
      expect(existsSync(join(dataDir, "svc.sqlite"))).toBe(true)
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }

    const command = `svc keys create --org default --name admin --all-scopes --data-dir ${dataDir}`
    const second = await serve(dataDir, [], "Ctrl+C")
    try {
      const out = second.stdout()
      expect(out).not.toMatch(/svco_/)
      expect(out).toMatch(/bootstrap key of 'default' .*never shown/)
      expect(out).toContain(`Make a new key with: ${command}`)
      const made = await svcJson(command.split(" ").slice(1), dataDir)
      const baseUrl = /Base URL: +(\S+)/.exec(out)![1]!
      expect((await apiGet(baseUrl, "/knowledgebases", made.key.secret)).status).toBe(200)
    } finally {
      expect(await second.stop()).toBe(0)
    }

    const third = await serve(dataDir, ["--json"])
    expect(await third.stop()).toBe(0)
    expect(parseOneDocument(third.stdout()).bootstrapKey).toBeNull()
    expect(third.stderr()).not.toMatch(/never shown/)
  })

  it("a start that shows the key leaves no record behind", async () => {
    const dataDir = freshDataDir()
    const first = await serve(dataDir, ["--json"])
    expect(parseOneDocument(first.stdout()).bootstrapKey).toMatch(/^svco_/)
    expect(await first.stop()).toBe(0)
    expect(existsSync(join(dataDir, "bootstrap-key-pending"))).toBe(false)
  })
})

describe("revocation against a running server", slow, () => {
  it("a key revoked with svc keys revoke fails the very next request with api_key_revoked", async () => {
    const dataDir = await backendDataDir()
    const served = await serve(dataDir, ["--json"])
    try {
      const { baseUrl } = parseOneDocument(served.stdout())
      const { key } = await svcJson(["keys", "create", "--org", "default", "--name", "ci", "--scopes", "knowledge:read"], dataDir)
      expect((await apiGet(baseUrl, "/knowledgebases", key.secret)).status).toBe(200)
      const revoked = await svcJson(["keys", "revoke", "--org", "default", key.id], dataDir)
      expect(revoked.key.revokedAt).toEqual(expect.any(String))
      const refused = await apiGet(baseUrl, "/knowledgebases", key.secret)
      expect(refused.status).toBe(401)
      expect(refused.body.error.code).toBe("api_key_revoked")
    } finally {
      expect(await served.stop()).toBe(0)
    }
  })

  it("a personal key stops working when svc members remove removes its member", async () => {
    const dataDir = await backendDataDir()
    const served = await serve(dataDir, ["--json"])
    try {
      const { baseUrl } = parseOneDocument(served.stdout())
      await svcJson(["members", "add", "--org", "default", "--email", "pat@example.com", "--role", "member"], dataDir)
      const { key } = await svcJson(
        ["keys", "create", "--org", "default", "--name", "laptop", "--all-scopes", "--personal", "--member", "pat@example.com"],
        dataDir
      )
      expect(key.kind).toBe("personal")
      expect(key.scopes).toBe("all")
      expect((await apiGet(baseUrl, "/knowledgebases", key.secret)).status).toBe(200)
      await svcJson(["members", "remove", "--org", "default", "--email", "pat@example.com"], dataDir)
      const refused = await apiGet(baseUrl, "/knowledgebases", key.secret)
      expect(refused.status).toBe(401)
      expect(refused.body.error.code).toBe("api_key_revoked")
    } finally {
      expect(await served.stop()).toBe(0)
    }
  })
})
