import { Readable } from "node:stream"
import { afterAll, describe, expect, it } from "vitest"
import { runCli } from "../../cli/program.js"
import { testDatabaseEnv } from "../support/server.js"
import { emptyDataDir, expectEnvelope, expectFailure, freshDataDir, parseOneDocument, removeDataDirs, slow, svc, svcJson, svcProcess } from "./helpers.js"

afterAll(removeDataDirs)

describe("svc", slow, () => {
  it("prints help on stdout and exits 0", async () => {
    const help = await svc(["--help"])
    expect(help.code).toBe(0)
    for (const family of ["serve", "orgs", "members", "keys", "review", "memories", "sources", "changes"]) {
      expect(help.stdout).toMatch(new RegExp(`^  ${family} `, "m"))
    }
    const upload = await svc(["sources", "upload", "--help"])
    expect(upload.code).toBe(0)
    for (const option of ["--base-url", "--api-key", "--name", "--folder", "--wait", "--json"]) expect(upload.stdout).toContain(option)
    const tail = await svc(["changes", "tail", "--help"])
    for (const option of ["--since", "--interval", "--once", "JSON Lines"]) expect(tail.stdout).toContain(option)
    const activity = await svc(["keys", "activity", "--help"])
    expect(activity.stdout).toContain("--org")
    const sub = await svc(["keys", "create", "--help"])
    expect(sub.code).toBe(0)
    expect(sub.stdout).toContain("--all-scopes")
    expect(sub.stdout).toContain("--json")
    expect(sub.stdout).toContain("--data-dir")
  })

  it("turns usage mistakes into one line and exit 2", async () => {
    const runs = await Promise.all(
      [[], ["orgs"], ["launch"], ["keys", "rotate"], ["orgs", "show", "a", "b"], ["orgs", "show", "--verbose", "a"]].map((args) =>
        svc(args, freshDataDir())
      )
    )
    const lines = runs.map((run) => expectFailure(run, 2))
    expect(lines[0]).toMatch(/needs a command/)
    expect(lines[1]).toMatch(/create, set, show/)
    expect(lines[2]).toMatch(/unknown command 'launch'/)
    expect(lines[3]).toMatch(/unknown command 'rotate'/)
    expect(lines[4]).toMatch(/too many arguments/)
    expect(lines[5]).toMatch(/--verbose/)
  })

  it("as a real process, runs an admin command and exits with its code", async () => {
    const dataDir = await emptyDataDir()
    const created = await svcProcess(["orgs", "create", "--slug", "acme", "--json"], dataDir)
    expect(created.stderr).toBe("")
    expect(created.code).toBe(0)
    expect(parseOneDocument(created.stdout).organization.slug).toBe("acme")
    expect(expectFailure(await svcProcess(["orgs", "show", "nope"], dataDir), 1)).toMatch(/nope/)
    expectFailure(await svcProcess(["orgs", "show"], dataDir), 2)
  })

  it("with --json, prints the error envelope as the one document on stdout and the line on stderr", async () => {
    const dataDir = await emptyDataDir()
    const unreachable = ["--base-url", "http://127.0.0.1:9/api/v1", "--api-key", "svco_x"]
    const [usage, missingOption, notFound, refused, apiDown] = await Promise.all([
      svc(["orgs", "show", "--json"], dataDir),
      svc(["keys", "create", "--org", "acme", "--name", "x", "--json"], dataDir),
      svc(["orgs", "show", "nope", "--json"], dataDir),
      svc(["orgs", "create", "--slug", "Not A Slug", "--json"], dataDir),
      svc(["changes", "tail", "all", "--once", "--json", ...unreachable])
    ])
    expect(expectFailure(usage!, 2, true)).toMatch(/slug/)
    expect(expectEnvelope(usage!.stdout).code).toBe("invalid_usage")
    expect(expectEnvelope(missingOption!.stdout)).toEqual({ code: "invalid_usage", message: "give exactly one of --scopes and --all-scopes." })
    expectFailure(missingOption!, 2, true)
    expect(expectFailure(notFound!, 1, true)).toBe("svc: No organization with slug 'nope'.")
    expect(expectEnvelope(notFound!.stdout)).toEqual({ code: "not_found", message: "No organization with slug 'nope'." })
    expectFailure(refused!, 1, true)
    expect(expectEnvelope(refused!.stdout).code).toBe("invalid_request")
    expectFailure(apiDown!, 1, true)
    expect(expectEnvelope(apiDown!.stdout).code).toBe("connection_error")
  })

  it("renders with ink only when the injected stdout is a terminal", async () => {
    const dataDir = await emptyDataDir()
    await svcJson(["orgs", "create", "--slug", "acme"], dataDir)
    let text = ""
    const code = await runCli(["orgs", "show", "acme", "--data-dir", dataDir], {
      env: { ...testDatabaseEnv(dataDir) },
      cwd: dataDir,
      stdout: { write: (chunk) => (text += chunk), isTTY: true, columns: 100 },
      stderr: { write: () => true },
      stdin: Readable.from([]),
      onStop: () => () => undefined
    })
    expect(code).toBe(0)
    expect(text).toMatch(/╭─+╮/)
    expect(text).toMatch(/│ plan +pro +│/)
    const plain = await svc(["orgs", "show", "acme"], dataDir)
    expect(plain.stdout).toMatch(/^plan: +pro$/m)
    expect(plain.stdout).not.toMatch(/╭/)
  })

  it("prints the version", async () => {
    const version = await svc(["--version"])
    expect(version.code).toBe(0)
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  })
})
