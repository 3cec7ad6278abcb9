/** `newSortableId`: UUID version 7, ordered by creation time, so bulk-created rows append to their B-trees. */
import { describe, expect, it } from "vitest"
import { isUuid, newSortableId } from "../../server/platform/ids.js"

describe("newSortableId", () => {
  it("makes version-7 UUIDs (RFC 9562 variant) that sort by the millisecond they were made", async () => {
    const first = newSortableId()
    await new Promise((resolve) => setTimeout(resolve, 3))
    const second = newSortableId()
    for (const id of [first, second]) {
      expect(isUuid(id)).toBe(true)
      expect(id[14]).toBe("7")
      expect("89ab").toContain(id[19]!)
    }
    expect(first < second).toBe(true)
    expect(Number.parseInt(first.replace(/-/g, "").slice(0, 12), 16)).toBeLessThanOrEqual(Date.now())
    expect(new Set(Array.from({ length: 1000 }, newSortableId)).size).toBe(1000)
  })
})
