/** Identifiers and secrets. */
import { createHash, randomBytes, randomUUID } from "node:crypto"

/** A new UUID v4. */
export const newId = (): string => randomUUID()

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** `length` characters of unbiased base62 randomness. */
export const randomToken = (length: number): string => {
  let out = ""
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += base62[byte % 62]
    }
  }
  return out
}

/** Hex SHA-256 of a string. */
export const sha256Hex = (text: string): string => createHash("sha256").update(text).digest("hex")

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether `text` is a UUID. */
export const isUuid = (text: string): boolean => uuidPattern.test(text)

/**
 * A new time-ordered UUID (version 7: 48 bits of milliseconds, then randomness). Rows keyed on it
 * are appended at the end of their B-trees instead of at random pages, which keeps the pages a
 * write dirties (and so what each commit writes) few: for rows created in bulk (end users, their
 * subscriptions).
 */
export const newSortableId = (): string => {
  const time = Date.now().toString(16).padStart(12, "0")
  // randomUUID draws from a cached pool, far cheaper than a small randomBytes call; its variant bits stay.
  const random = randomUUID()
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15, 18)}${random.slice(18)}`
}
