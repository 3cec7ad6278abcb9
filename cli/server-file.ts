/**
 * The running server's record in its data directory: `svc serve` writes `server.json` (pid, base URL,
 * MCP URL, start time) once it accepts connections and removes it when it stops; `svc status` and
 * `svc reset` read it. A record whose process is gone (a crash, a SIGKILL) counts as no server.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/** What `server.json` holds. */
export interface ServerRecord {
  readonly pid: number
  readonly baseUrl: string
  readonly mcpUrl: string
  readonly startedAt: string
}

/** The record's file inside a data directory. */
export const serverFile = (dataDir: string): string => join(dataDir, "server.json")

/** Records the server this process runs on `dataDir` (nothing when the directory does not exist: PostgreSQL without one). */
export const writeServerRecord = (dataDir: string, server: { readonly baseUrl: string; readonly mcpUrl: string }): void => {
  if (!existsSync(dataDir)) return
  const record: ServerRecord = { pid: process.pid, baseUrl: server.baseUrl, mcpUrl: server.mcpUrl, startedAt: new Date().toISOString() }
  writeFileSync(serverFile(dataDir), `${JSON.stringify(record, null, 2)}\n`)
}

/** Removes the record if this process wrote it (another server may have started on the directory since). */
export const removeServerRecord = (dataDir: string): void => {
  if (readServerRecord(dataDir)?.pid === process.pid) rmSync(serverFile(dataDir), { force: true })
}

/** Whether process `pid` is alive (signal 0 only checks; EPERM means it exists under another user). */
const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** The record as written, or null when there is none or it cannot be read. */
const readServerRecord = (dataDir: string): ServerRecord | null => {
  try {
    const record = JSON.parse(readFileSync(serverFile(dataDir), "utf8")) as ServerRecord
    return Number.isInteger(record.pid) && typeof record.baseUrl === "string" ? record : null
  } catch {
    return null
  }
}

/** The server running on `dataDir` now, or null (no record, or its process is gone). */
export const runningServer = (dataDir: string): ServerRecord | null => {
  const record = readServerRecord(dataDir)
  return record !== null && isAlive(record.pid) ? record : null
}
