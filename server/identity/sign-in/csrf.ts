/**
 * CSRF protection of every Portal form: a double-submit token. A random token lives in an HttpOnly
 * cookie scoped to the Portal and is repeated in a hidden field of each form (and sent by the
 * page's script); a POST is refused unless both are present and equal. A cross-site page can make
 * a browser send the cookie (SameSite=Lax already keeps it off cross-site POSTs) but can neither
 * read it nor set it, so it cannot fill in the field.
 */
import { randomBytes, timingSafeEqual } from "node:crypto"

/** The CSRF cookie's name. */
export const csrfCookie = "svc_portal_csrf"

/** The hidden form field carrying the token. */
export const csrfField = "csrf_token"

/** A new CSRF token. */
export const newCsrfToken = (): string => randomBytes(24).toString("base64url")

/** Whether a token looks like one this module made (anything else is replaced, never echoed). */
export const isCsrfToken = (value: string | undefined): value is string => value !== undefined && /^[A-Za-z0-9_-]{32}$/.test(value)

/** Whether the form's token matches the cookie's, in constant time. */
export const csrfMatches = (cookie: string | undefined, field: string | undefined | null): boolean => {
  if (!isCsrfToken(cookie) || typeof field !== "string" || field.length !== cookie.length) return false
  return timingSafeEqual(Buffer.from(cookie), Buffer.from(field))
}
