/**
 * Which network addresses the service may reach when it fetches a URL on a caller's behalf
 * (`url` sources: "a public http(s) address, checked and fetched by the service"), and a first,
 * purely syntactic check of such a URL.
 *
 * The policy is an allowlist: an address is public only when ipaddr.js names its range `unicast`
 * (for IPv6: and it lies in global unicast 2000::/3), or when it is one of the IPv6 forms that embed
 * an IPv4 address and that embedded address is itself public. Everything else is refused:
 *
 * IPv4 (ipaddr.js `range()` names)
 * - `unspecified`      0.0.0.0/8 (this network, includes 0.0.0.0)
 * - `broadcast`        255.255.255.255/32
 * - `multicast`        224.0.0.0/4
 * - `linkLocal`        169.254.0.0/16 (includes the cloud metadata address 169.254.169.254)
 * - `loopback`         127.0.0.0/8
 * - `carrierGradeNat`  100.64.0.0/10
 * - `private`          10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16
 * - `reserved`         192.0.0.0/24 (IETF protocol assignments), 192.0.2.0/24, 198.51.100.0/24,
 *                      203.0.113.0/24 (documentation), 192.88.99.0/24 (6to4 relay anycast),
 *                      198.18.0.0/15 (benchmarking), 240.0.0.0/4 (future use)
 * - `as112`            192.175.48.0/24, 192.31.196.0/24
 * - `amt`              192.52.193.0/24
 *
 * IPv6
 * - `unspecified` ::, `loopback` ::1, `linkLocal` fe80::/10, `uniqueLocal` fc00::/7,
 *   `multicast` ff00::/8, `deprecatedSiteLocal` fec0::/10, `discard` 100::/64
 * - `teredo` 2001::/32 (refused outright: it tunnels to an obfuscated IPv4 client address)
 * - `benchmarking` 2001:2::/48, `amt` 2001:3::/32, `as112v6`, `deprecatedOrchid`, `orchid2`,
 *   `droneRemoteIdProtocolEntityTags`, `segmentRouting` 5f00::/16, `reserved` (2001::/23,
 *   documentation 2001:db8::/32 and 3fff::/20)
 * - `rfc6145` ::ffff:0:0:0/96 (IPv4-translated) and the IPv4-compatible ::/96 (deprecated): refused
 * - anything outside 2000::/3 that ipaddr.js still calls `unicast` (unassigned space)
 * - `rfc6052` NAT64: the well-known prefix 64:ff9b::/96 is judged by the IPv4 address in its last
 *   32 bits; the local-use prefix 64:ff9b:1::/48 (RFC 8215) is refused outright
 * - `ipv4Mapped` ::ffff:0:0/96 is judged by the embedded IPv4 address (`::ffff:127.0.0.1` refused)
 * - `6to4` 2002::/16 is judged by the IPv4 address in bits 16..47 (`2002:7f00:1::` refused)
 *
 * Anything that does not parse as an IP address is not public.
 */
import { isIPv4, isIPv6 } from "node:net"
import ipaddr from "ipaddr.js"

type IPv4 = ipaddr.IPv4
type IPv6 = ipaddr.IPv6

const globalUnicast = ipaddr.parseCIDR("2000::/3") as [IPv6, number]
const nat64WellKnown = ipaddr.parseCIDR("64:ff9b::/96") as [IPv6, number]

/** The verdict on one address: whether it may be reached, and the range that decided it. */
export interface AddressVerdict {
  readonly public: boolean
  /** ipaddr.js range name (`unicast`, `loopback`, `private`, ...); for IPv6 forms embedding an IPv4
   *  address, the form and the IPv4 range (`ipv4Mapped/loopback`); `invalid` when it is no address. */
  readonly range: string
}

const v4Verdict = (v4: IPv4): AddressVerdict => {
  const range = v4.range()
  return { public: range === "unicast", range }
}

const embedded = (form: string, v4: IPv4): AddressVerdict => {
  const inner = v4Verdict(v4)
  return { public: inner.public, range: `${form}/${inner.range}` }
}

const v6Verdict = (v6: IPv6): AddressVerdict => {
  const range = v6.range()
  const parts = v6.parts
  switch (range) {
    case "ipv4Mapped":
      return embedded(range, v6.toIPv4Address())
    case "rfc6052":
      if (v6.match(nat64WellKnown)) {
        return embedded(range, new ipaddr.IPv4([parts[6]! >> 8, parts[6]! & 0xff, parts[7]! >> 8, parts[7]! & 0xff]))
      }
      return { public: false, range }
    case "6to4":
      return embedded(range, new ipaddr.IPv4([parts[1]! >> 8, parts[1]! & 0xff, parts[2]! >> 8, parts[2]! & 0xff]))
    case "unicast":
      if (v6.match(globalUnicast)) return { public: true, range }
      return { public: false, range: parts.slice(0, 6).every((p) => p === 0) ? "ipv4Compatible" : "unassigned" }
    default:
      return { public: false, range }
  }
}

/**
 * Parses a strictly spelled address: dotted-decimal IPv4, or IPv6 (a zone suffix `%eth0` is
 * dropped). IPv6 with a dotted IPv4 tail is normalized by WHATWG URL parsing first, because
 * ipaddr.js reads the deprecated IPv4-compatible `::a.b.c.d` as if it were `::ffff:a.b.c.d`.
 */
const parseAddress = (ip: string): IPv4 | IPv6 | null => {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip
  const unzoned = bare.includes("%") ? bare.slice(0, bare.indexOf("%")) : bare
  try {
    if (isIPv4(unzoned)) return ipaddr.IPv4.parse(unzoned)
    if (!isIPv6(unzoned)) return null
    const hex = unzoned.includes(".") ? new URL(`http://[${unzoned}]/`).hostname.slice(1, -1) : unzoned
    return ipaddr.IPv6.parse(hex)
  } catch {
    return null
  }
}

/** Classifies an IP address (v4 or v6); anything else is `{ public: false, range: "invalid" }`. */
export const describeAddress = (ip: string): AddressVerdict => {
  const parsed = parseAddress(ip)
  if (parsed === null) return { public: false, range: "invalid" }
  return parsed.kind() === "ipv4" ? v4Verdict(parsed as IPv4) : v6Verdict(parsed as IPv6)
}

/** True when `ip` is a public address the service may connect to (see the module comment). */
export const isPublicAddress = (ip: string): boolean => describeAddress(ip).public

/**
 * True when `ip` is public or this machine's loopback (webhooks may be sent to a local receiver;
 * every other private range stays refused).
 */
export const isPublicOrLoopback = (ip: string): boolean => {
  const { public: open, range } = describeAddress(ip)
  return open || range === "loopback" || range === "ipv4Mapped/loopback"
}

/** Why a URL is refused before any network activity. */
export type UrlRefusalReason = "invalid_url" | "bad_scheme" | "credentials" | "blocked_address"

/** The outcome of `checkUrl`. */
export type UrlCheck =
  | { readonly ok: true; readonly url: URL }
  | { readonly ok: false; readonly reason: UrlRefusalReason; readonly message: string }

/** The host of a parsed URL as an IP address string, or null when it is a name. */
export const ipLiteralHost = (url: URL): string | null => {
  const host = url.hostname
  if (host.startsWith("[") && host.endsWith("]")) return host.slice(1, -1)
  // WHATWG parsing has already turned every IPv4 spelling (decimal, octal, hex, short forms,
  // trailing dot) into dotted-quad form.
  return isIPv4(host) ? host : null
}

const isLocalhostName = (host: string) => {
  const name = host.endsWith(".") ? host.slice(0, -1) : host
  return name === "localhost" || name.endsWith(".localhost")
}

/**
 * Checks a URL before it is fetched: it must parse, use http or https, carry no user name or
 * password, and (unless `allowPrivate`) its host must not be an IP literal outside the public ranges
 * (nor the reserved name `localhost`, RFC 6761). Any port is allowed. Host names are not resolved
 * here: `safeFetch` checks the resolved addresses at connect time.
 *
 * `classify` replaces `isPublicAddress` (tests use it to treat one loopback address as public);
 * `loopbackNames` also lets `localhost` names through (webhooks, which may reach a local receiver).
 */
export const checkUrl = (
  raw: string,
  allowPrivate: boolean,
  classify: (ip: string) => boolean = isPublicAddress,
  loopbackNames = false
): UrlCheck => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { ok: false, reason: "invalid_url", message: `"${truncate(raw)}" is not a valid URL.` }
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return {
      ok: false,
      reason: "bad_scheme",
      message: `Only http and https URLs can be fetched, not ${url.protocol.slice(0, -1)}.`
    }
  }
  if (url.username !== "" || url.password !== "") {
    return { ok: false, reason: "credentials", message: "URLs with a user name or password are not fetched." }
  }
  if (!allowPrivate) {
    const ip = ipLiteralHost(url)
    if (ip !== null && !classify(ip)) {
      return {
        ok: false,
        reason: "blocked_address",
        message: `${ip} is not a public address (${describeAddress(ip).range}); only public addresses are fetched.`
      }
    }
    if (ip === null && isLocalhostName(url.hostname) && !loopbackNames) {
      return {
        ok: false,
        reason: "blocked_address",
        message: `${url.hostname} names this machine; only public addresses are fetched.`
      }
    }
  }
  return { ok: true, url }
}

const truncate = (s: string) => (s.length > 200 ? `${s.slice(0, 200)}…` : s)
