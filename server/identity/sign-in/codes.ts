/**
 * One-time sign-in codes and the opaque tokens of Portal sessions: how they are made and how they
 * are kept. Neither is stored in the clear: both are kept as an HMAC-SHA256 under the server's
 * Portal secret (`settings.portal_sign_in_secret`, made on first use), so a copy of the database
 * alone lets nobody sign in.
 */
import { createHmac, randomBytes, randomInt, timingSafeEqual } from "node:crypto"

/** How long a code may be used. */
export const codeTtlMs = 10 * 60_000

/** Wrong answers a code takes before it is spent (a new code is needed then). */
export const maxCodeTries = 5

/** Codes one person may be sent at one Portal per `codeTtlMs`; more requests send nothing (the page stays neutral). */
export const maxCodesPerWindow = 5

/** How often a revoked identity is told by email that it cannot sign in: once per this window. */
export const refusalWindowMs = 60 * 60_000

/** A new 6-digit code (leading zeros kept). */
export const newCode = (): string => String(randomInt(0, 1_000_000)).padStart(6, "0")

/** The server-wide setting that holds the HMACs' secret: one secret for the Portal's and MCP's sign-in. */
export const signInSecretSetting = "portal_sign_in_secret"

/** A new secret for the HMACs. */
export const newPortalSecret = (): string => randomBytes(32).toString("hex")

/** A new opaque session token for the cookie (256 random bits). */
export const newSessionToken = (): string => randomBytes(32).toString("base64url")

/** The HMAC of `value` under `secret`, for a given purpose (codes and tokens never share a digest). */
export const keyedHash = (secret: string, purpose: "code" | "session", value: string): string =>
  createHmac("sha256", secret).update(`${purpose}:${value}`).digest("hex")

/** Whether two hex digests are equal, in constant time. */
export const sameDigest = (a: string, b: string): boolean => {
  const left = Buffer.from(a, "hex")
  const right = Buffer.from(b, "hex")
  return left.length === right.length && timingSafeEqual(left, right)
}

/** What a person typed as a code, with spaces and dashes taken out; null unless it is 6 digits. */
export const normalisedCode = (typed: string): string | null => {
  const digits = typed.replace(/[\s-]/g, "")
  return /^\d{6}$/.test(digits) ? digits : null
}
