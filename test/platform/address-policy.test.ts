import { describe, expect, it } from "vitest"
import { checkUrl, describeAddress, isPublicAddress, isPublicOrLoopback } from "../../server/platform/net/address-policy.js"

/** [address, public?, range named in the verdict] */
const addresses: ReadonlyArray<readonly [string, boolean, string]> = [
  // IPv4 public
  ["8.8.8.8", true, "unicast"],
  ["1.1.1.1", true, "unicast"],
  ["93.184.215.14", true, "unicast"],
  ["172.15.255.255", true, "unicast"],
  ["172.32.0.1", true, "unicast"],
  ["100.63.255.255", true, "unicast"],
  ["100.128.0.0", true, "unicast"],
  ["223.255.255.255", true, "unicast"],
  // IPv4 refused
  ["127.0.0.1", false, "loopback"],
  ["127.255.255.254", false, "loopback"],
  ["10.0.0.1", false, "private"],
  ["172.16.0.1", false, "private"],
  ["172.31.255.255", false, "private"],
  ["192.168.1.1", false, "private"],
  ["169.254.169.254", false, "linkLocal"],
  ["169.254.0.1", false, "linkLocal"],
  ["0.0.0.0", false, "unspecified"],
  ["0.1.2.3", false, "unspecified"],
  ["100.64.0.1", false, "carrierGradeNat"],
  ["100.127.255.255", false, "carrierGradeNat"],
  ["224.0.0.1", false, "multicast"],
  ["239.255.255.250", false, "multicast"],
  ["255.255.255.255", false, "broadcast"],
  ["240.0.0.1", false, "reserved"],
  ["192.0.0.8", false, "reserved"],
  ["192.0.2.1", false, "reserved"],
  ["198.51.100.7", false, "reserved"],
  ["203.0.113.9", false, "reserved"],
  ["198.18.0.1", false, "reserved"],
  ["198.19.255.255", false, "reserved"],
  ["192.88.99.1", false, "reserved"],
  ["192.175.48.1", false, "as112"],
  ["192.52.193.1", false, "amt"],
  // IPv6 public
  ["2606:4700:4700::1111", true, "unicast"],
  ["2001:4860:4860::8888", true, "unicast"],
  ["2a00:1450:4001:80b::200e", true, "unicast"],
  // IPv6 refused
  ["::1", false, "loopback"],
  ["::", false, "unspecified"],
  ["fe80::1", false, "linkLocal"],
  ["fe80::1%eth0", false, "linkLocal"],
  ["fc00::1", false, "uniqueLocal"],
  ["fd12:3456:789a::1", false, "uniqueLocal"],
  ["ff02::1", false, "multicast"],
  ["fec0::1", false, "deprecatedSiteLocal"],
  ["100::1", false, "discard"],
  ["2001:db8::1", false, "reserved"],
  ["3fff::1", false, "reserved"],
  ["2001:2::1", false, "benchmarking"],
  ["5f00::1", false, "segmentRouting"],
  ["4000::1", false, "unassigned"],
  // Teredo: refused whatever it embeds
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", false, "teredo"],
  ["2001::1", false, "teredo"],
  // IPv4-mapped: judged by the IPv4 address
  ["::ffff:127.0.0.1", false, "ipv4Mapped/loopback"],
  ["::ffff:7f00:1", false, "ipv4Mapped/loopback"],
  ["::ffff:169.254.169.254", false, "ipv4Mapped/linkLocal"],
  ["::ffff:10.1.2.3", false, "ipv4Mapped/private"],
  ["::ffff:0.0.0.0", false, "ipv4Mapped/unspecified"],
  ["::ffff:8.8.8.8", true, "ipv4Mapped/unicast"],
  // IPv4-compatible and IPv4-translated: refused
  ["::127.0.0.1", false, "ipv4Compatible"],
  ["::8.8.8.8", false, "ipv4Compatible"],
  ["::ffff:0:7f00:1", false, "rfc6145"],
  // NAT64 well-known prefix: judged by the IPv4 address; local-use prefix refused
  ["64:ff9b::127.0.0.1", false, "rfc6052/loopback"],
  ["64:ff9b::a9fe:a9fe", false, "rfc6052/linkLocal"],
  ["64:ff9b::192.168.0.1", false, "rfc6052/private"],
  ["64:ff9b::8.8.8.8", true, "rfc6052/unicast"],
  ["64:ff9b:1::8.8.8.8", false, "rfc6052"],
  // 6to4: judged by the IPv4 address in bits 16..47
  ["2002:7f00:1::1", false, "6to4/loopback"],
  ["2002:a9fe:a9fe::", false, "6to4/linkLocal"],
  ["2002:c0a8:101::1", false, "6to4/private"],
  ["2002:808:808::1", true, "6to4/unicast"],
  // not addresses
  ["", false, "invalid"],
  ["localhost", false, "invalid"],
  ["example.com", false, "invalid"],
  ["127.1", false, "invalid"],
  ["0x7f.0.0.1", false, "invalid"],
  ["2130706433", false, "invalid"],
  ["1.2.3.4.5", false, "invalid"]
]

describe("isPublicAddress", () => {
  it.each(addresses)("%s → public %s (%s)", (ip, expected, range) => {
    expect(isPublicAddress(ip)).toBe(expected)
    expect(describeAddress(ip)).toEqual({ public: expected, range })
  })
})

/** [url, allowed without allowPrivate?, refusal reason] */
const urls: ReadonlyArray<readonly [string, boolean, string | null]> = [
  ["https://example.com/docs?q=1", true, null],
  ["http://example.com:8080/", true, null],
  ["https://example.com:1/", true, null],
  ["http://8.8.8.8/", true, null],
  ["http://[2606:4700:4700::1111]/", true, null],
  ["http://[::ffff:8.8.8.8]/", true, null],
  // IP-literal hosts in blocked ranges, however spelled
  ["http://127.0.0.1/", false, "blocked_address"],
  ["http://127.0.0.1:8787/api", false, "blocked_address"],
  ["http://2130706433/", false, "blocked_address"],
  ["http://0x7f.1/", false, "blocked_address"],
  ["http://0x7f000001/", false, "blocked_address"],
  ["http://0177.0.0.1/", false, "blocked_address"],
  ["http://127.1/", false, "blocked_address"],
  ["http://127.0.0.1./", false, "blocked_address"],
  ["http://0/", false, "blocked_address"],
  ["http://0.0.0.0:80/", false, "blocked_address"],
  ["http://169.254.169.254/latest/meta-data/", false, "blocked_address"],
  ["http://0xa9.0xfe.0xa9.0xfe/", false, "blocked_address"],
  ["http://2852039166/", false, "blocked_address"],
  ["http://10.0.0.1/", false, "blocked_address"],
  ["http://192.168.0.1/", false, "blocked_address"],
  ["http://100.64.0.1/", false, "blocked_address"],
  ["http://[::1]/", false, "blocked_address"],
  ["http://[::]/", false, "blocked_address"],
  ["http://[::ffff:127.0.0.1]/", false, "blocked_address"],
  ["http://[::ffff:7f00:1]/", false, "blocked_address"],
  ["http://[64:ff9b::127.0.0.1]/", false, "blocked_address"],
  ["http://[2002:7f00:1::]/", false, "blocked_address"],
  ["http://[fe80::1]/", false, "blocked_address"],
  ["http://[fd00::1]/", false, "blocked_address"],
  ["http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", false, "blocked_address"],
  ["http://localhost/", false, "blocked_address"],
  ["http://LOCALHOST./", false, "blocked_address"],
  ["http://api.localhost:3000/", false, "blocked_address"],
  // schemes and credentials: refused with or without allowPrivate
  ["ftp://example.com/file", false, "bad_scheme"],
  ["file:///etc/passwd", false, "bad_scheme"],
  ["gopher://example.com/", false, "bad_scheme"],
  ["data:text/plain,hello", false, "bad_scheme"],
  ["javascript:alert(1)", false, "bad_scheme"],
  ["ws://example.com/", false, "bad_scheme"],
  ["https://user:secret@example.com/", false, "credentials"],
  ["https://user@example.com/", false, "credentials"],
  ["https://:secret@example.com/", false, "credentials"],
  // not URLs
  ["not a url", false, "invalid_url"],
  ["", false, "invalid_url"],
  ["http://", false, "invalid_url"],
  ["http://[::1/", false, "invalid_url"],
  ["//example.com/", false, "invalid_url"]
]

describe("checkUrl", () => {
  it.each(urls)("%s → allowed %s (%s)", (raw, allowed, reason) => {
    const result = checkUrl(raw, false)
    if (allowed) {
      expect(result.ok).toBe(true)
    } else {
      expect(result).toMatchObject({ ok: false, reason })
      if (!result.ok) expect(result.message.length).toBeGreaterThan(10)
    }
  })

  it("normalizes odd IPv4 spellings before judging them", () => {
    const result = checkUrl("http://2130706433/", false)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.message).toContain("127.0.0.1")
    const allowed = checkUrl("http://0x7f.1:9000/x", true)
    expect(allowed.ok && allowed.url.host).toBe("127.0.0.1:9000")
  })

  it("allowPrivate lifts the address checks but not the scheme or credential checks", () => {
    for (const [raw, , reason] of urls) {
      const result = checkUrl(raw, true)
      if (reason === null || reason === "blocked_address") expect(result.ok, raw).toBe(true)
      else expect(result, raw).toMatchObject({ ok: false, reason })
    }
  })

  it("takes a replacement classifier", () => {
    const classify = (ip: string) => ip === "127.0.0.2" || isPublicAddress(ip)
    expect(checkUrl("http://127.0.0.2:81/", false, classify).ok).toBe(true)
    expect(checkUrl("http://127.0.0.1:81/", false, classify)).toMatchObject({ ok: false, reason: "blocked_address" })
  })

  it("leaves host names to resolution time", () => {
    const result = checkUrl("https://internal.example/", false)
    expect(result.ok && result.url.hostname).toBe("internal.example")
  })
})

describe("the webhook allowance: public addresses and this machine's loopback", () => {
  it("admits loopback addresses and, when asked, localhost names; other private ranges stay refused", () => {
    for (const ip of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1", "93.184.216.34"]) expect(isPublicOrLoopback(ip), ip).toBe(true)
    for (const ip of ["10.1.2.3", "192.168.0.1", "169.254.169.254", "172.16.0.1", "fd00::1", "0.0.0.0"]) expect(isPublicOrLoopback(ip), ip).toBe(false)
    expect(checkUrl("http://localhost:4000/hooks", false, isPublicOrLoopback, true).ok).toBe(true)
    expect(checkUrl("http://localhost:4000/hooks", false, isPublicOrLoopback).ok).toBe(false)
    expect(checkUrl("http://10.0.0.1/hooks", false, isPublicOrLoopback, true).ok).toBe(false)
  })
})
