/**
 * Whether the one-time bootstrap key was shown, recorded durably in the data directory: `svc serve`
 * writes `bootstrap-key-pending` before the first start of a new data directory and removes it once the
 * key is printed. A start that finds the record without getting a key (an earlier start created the key
 * and stopped, failed or crashed before printing it) says how to get one instead, once.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/** The record's file inside a data directory. */
export const pendingFile = (dataDir: string): string => join(dataDir, "bootstrap-key-pending")

const explanation =
  "svc serve made this file before the first start of this data directory; it removes it once the bootstrap key has been shown.\n"

/**
 * Records, before the first start of a new data directory (`isNew`: no database yet), that its
 * bootstrap key has not been shown. `ensureDirectory` creates the directory as the server would.
 */
export const recordPending = (dataDir: string, isNew: boolean, ensureDirectory: (dir: string) => void): void => {
  if (!isNew) return
  ensureDirectory(dataDir)
  writeFileSync(pendingFile(dataDir), explanation, { flush: true })
}

/** Whether a bootstrap key was made and never shown (only meaningful when this start got no key). */
export const isPending = (dataDir: string): boolean => existsSync(pendingFile(dataDir))

/** Records that the key (or the way to get one) has been shown. */
export const recordShown = (dataDir: string): void => {
  rmSync(pendingFile(dataDir), { force: true })
}

/** `word` as one shell word: as it is when safe, else in single quotes. */
const shellWord = (word: string): string => {
  if (/^[\w./:@%+=-]+$/.test(word)) return word
  return "'" + word.split("'").join("'\\''") + "'"
}

/** The exact command that makes a new all-scopes key of `org` on `dataDir`. */
export const createKeyCommand = (org: string, dataDir: string): string =>
  `svc keys create --org ${shellWord(org)} --name admin --all-scopes --data-dir ${shellWord(dataDir)}`

/** What a start says when the bootstrap key was made and never shown. */
export const lostKeyNotice = (org: string, dataDir: string): string =>
  `The bootstrap key of '${org}' was made by an earlier start that stopped before showing it, so it was never shown. ` +
  `Make a new key with: ${createKeyCommand(org, dataDir)}`
