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
