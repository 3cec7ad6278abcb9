/**
 * Sign-in cookies: the Portal's session cookie (the opaque token; HttpOnly, SameSite=Lax, Secure when
 * the request came over https, scoped to the Portal's path, with an expiry) and the CSRF cookie of
 * the double-submit check (`csrf.ts`), whose attributes MCP sign-in's authorization page shares.
 */

/** How long a Portal session lasts. */
export const sessionTtlMs = 7 * 24 * 60 * 60_000

/** The session cookie's name. */
export const sessionCookie = "svc_portal_session"

/** Whether the request reached the service over https (directly, or through a proxy that says so). */
export const cameOverHttps = (headers: Readonly<Record<string, string | undefined>>, url: URL): boolean =>
  url.protocol === "https:" || (headers["x-forwarded-proto"] ?? "").split(",")[0]!.trim().toLowerCase() === "https"

/** The path every cookie of a Portal is scoped to. */
export const portalPath = (portalId: string): string => `/portals/${encodeURIComponent(portalId)}/`

/** A cookie to set with an answer; `maxAgeSeconds: 0` removes it. */
export interface CookieToSet {
  readonly name: string
  readonly value: string
  readonly maxAgeSeconds: number
}

/** How long the CSRF cookie lasts (browsers cap cookies at 400 days). */
export const csrfCookieSeconds = 400 * 24 * 60 * 60

/** The attributes of every Portal cookie: HttpOnly, SameSite=Lax, the Portal's path, Secure over https. */
export const cookieOptions = (path: string, secure: boolean, maxAgeSeconds: number) => ({
  path,
  httpOnly: true,
  sameSite: "lax" as const,
  secure,
  maxAge: `${maxAgeSeconds} seconds` as const,
  ...(maxAgeSeconds === 0 ? { expires: new Date(0) } : {})
})

/** The cookies of a `Cookie` header, by name (the first of a repeated name wins). */
export const parseCookies = (header: string | undefined): ReadonlyMap<string, string> => {
  const cookies = new Map<string, string>()
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=")
    if (at <= 0) continue
    const name = part.slice(0, at).trim()
    if (!cookies.has(name)) cookies.set(name, part.slice(at + 1).trim())
  }
  return cookies
}
