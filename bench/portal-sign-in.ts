/**
 * The Portal benchmark's sign-in load: each person, like a browser without JavaScript, GETs the
 * Portal page (CSRF cookie and form token), POSTs the email (code request), reads the code from the
 * outbox email (SQL on the data directory, as a mailbox would receive it) and POSTs it (303 and the
 * session cookie). `concurrency` people sign in at once, each step timed.
 */
import type Database from "better-sqlite3"
import { Agent, request } from "undici"

/** The timed steps of one sign-in. */
export const signInSteps = ["page", "requestCode", "readCode", "verifyCode", "whole"] as const
export type SignInStep = (typeof signInSteps)[number]

/** What a sign-in load came to. */
export interface SignInLoad {
  readonly people: number
  readonly concurrency: number
  readonly signedIn: number
  readonly seconds: number
  /** When the first request was sent and the last sign-in ended (ms since the epoch). */
  readonly startedAt: number
  readonly endedAt: number
  /** Milliseconds of each step of every successful sign-in. */
  readonly stepMs: Record<SignInStep, Array<number>>
  /** Failed sign-ins, by what went wrong. */
  readonly errors: Record<string, number>
}

/** Cookies a browser keeps for the Portal: name → value, from `Set-Cookie` answers. */
const keepCookies = (jar: Map<string, string>, setCookie: string | Array<string> | undefined) => {
  for (const line of setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie]) {
    const pair = line.split(";", 1)[0] ?? ""
    const at = pair.indexOf("=")
    if (at <= 0) continue
    if (/;\s*Max-Age=0/i.test(line)) jar.delete(pair.slice(0, at))
    else jar.set(pair.slice(0, at), pair.slice(at + 1))
  }
}

const cookieHeader = (jar: Map<string, string>) => [...jar].map(([name, value]) => `${name}=${value}`).join("; ")

class SignInFailed extends Error {}

/** Signs `emails` in at the Portal, `concurrency` people at a time. */
export const signInLoad = async (options: {
  readonly origin: string
  readonly portalId: string
  readonly emails: ReadonlyArray<string>
  readonly concurrency: number
  readonly db: Database.Database
}): Promise<SignInLoad> => {
  const { origin, portalId, emails, concurrency } = options
  const base = `${origin}/portals/${portalId}/`
  const latestCode = options.db.prepare<[string], { body: string }>(
    "SELECT body FROM outbox_emails WHERE recipient = ? AND kind = 'sign_in_code' ORDER BY created_at DESC, rowid DESC LIMIT 1"
  )
  const dispatcher = new Agent({ connections: concurrency + 5, pipelining: 0 })
  const stepMs: Record<SignInStep, Array<number>> = { page: [], requestCode: [], readCode: [], verifyCode: [], whole: [] }
  const errors: Record<string, number> = {}
  let signedIn = 0

  const send = async (jar: Map<string, string>, method: "GET" | "POST", path: string, form?: Record<string, string>) => {
    const response = await request(new URL(path, base), {
      method,
      dispatcher,
      headers: {
        ...(jar.size === 0 ? {} : { cookie: cookieHeader(jar) }),
        ...(form === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" })
      },
      ...(form === undefined ? {} : { body: new URLSearchParams(form).toString() })
    })
    keepCookies(jar, response.headers["set-cookie"])
    return { status: response.statusCode, text: await response.body.text() }
  }
  const expect = (what: string, status: number, wanted: number) => {
    if (status !== wanted) throw new SignInFailed(`${what} answered ${status}`)
  }

  const signIn = async (email: string) => {
    const jar = new Map<string, string>()
    const times: Partial<Record<SignInStep, number>> = {}
    const started = performance.now()
    let at = started
    const lap = (step: SignInStep) => {
      const now = performance.now()
      times[step] = now - at
      at = now
    }
    const page = await send(jar, "GET", "")
    expect("GET the Portal page", page.status, 200)
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)?.[1]
    if (csrf === undefined || !jar.has("svc_portal_csrf")) throw new SignInFailed("the page has no CSRF token or cookie")
    lap("page")
    expect("POST sign-in", (await send(jar, "POST", "sign-in", { csrf_token: csrf, email })).status, 200)
    lap("requestCode")
    const code = /\b(\d{6})\b/.exec(latestCode.get(email)?.body ?? "")?.[1]
    if (code === undefined) throw new SignInFailed("no code email in the outbox")
    lap("readCode")
    expect("POST verify", (await send(jar, "POST", "verify", { csrf_token: csrf, email, code })).status, 303)
    if (!jar.has("svc_portal_session")) throw new SignInFailed("no session cookie after the code")
    lap("verifyCode")
    times.whole = performance.now() - started
    for (const step of signInSteps) stepMs[step].push(times[step]!)
    signedIn++
  }

  let next = 0
  const startedAt = Date.now()
  const started = performance.now()
  await Promise.all(
    Array.from({ length: Math.min(concurrency, emails.length) }, async () => {
      while (next < emails.length) {
        const email = emails[next++]!
        try {
          await signIn(email)
        } catch (error) {
          const reason = error instanceof SignInFailed ? error.message : `connection: ${(error as Error).message}`
          errors[reason] = (errors[reason] ?? 0) + 1
        }
      }
    })
  )
  const seconds = (performance.now() - started) / 1_000
  const endedAt = Date.now()
  await dispatcher.close()
  return { people: emails.length, concurrency, signedIn, seconds, startedAt, endedAt, stepMs, errors }
}
