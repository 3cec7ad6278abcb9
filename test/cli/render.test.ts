import { describe, expect, it } from "vitest"
import type { Block } from "../../cli/ui/blocks.js"
import { renderPlain } from "../../cli/ui/plain.js"
import { renderBlocks } from "../../cli/ui/render.js"

const strip = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "")

const blocks: ReadonlyArray<Block> = [
  { kind: "title", text: "2 keys in acme", tone: "info" },
  {
    kind: "table",
    columns: ["id", "name", "status"],
    rows: [
      ["3d0cc635-65aa-4ba3-b9ff-6391ced58e7c", "bootstrap", "active"],
      ["6b29d9d3-4663-4e21-904e-4b580a0d393b", "laptop", "revoked"]
    ],
    empty: "No keys."
  },
  { kind: "secret", label: "Secret", value: "svco_abc", note: "Store it now." }
]

describe("human output", () => {
  it("renders plain text as aligned columns and key: value lines", () => {
    expect(renderPlain(blocks)).toBe(
      [
        "2 keys in acme",
        "ID                                    NAME       STATUS",
        "3d0cc635-65aa-4ba3-b9ff-6391ced58e7c  bootstrap  active",
        "6b29d9d3-4663-4e21-904e-4b580a0d393b  laptop     revoked",
        "",
        "Secret: svco_abc",
        "Store it now.",
        ""
      ].join("\n")
    )
    expect(renderPlain([{ kind: "fields", rows: [["id", "1"], ["name", "x"]] }])).toBe("id:   1\nname: x\n")
    expect(renderPlain([{ kind: "table", columns: ["id"], rows: [], empty: "No keys." }])).toBe("No keys.\n")
  })

  it("renders a table on a wide terminal and one record per row on a narrow one", () => {
    const wide = strip(renderBlocks(blocks, 120))
    expect(wide).toMatch(/│ ID +NAME +STATUS +│/)
    expect(wide).toMatch(/│ 6b29d9d3-4663-4e21-904e-4b580a0d393b +laptop +revoked +│/)
    expect(wide).toContain("⚠ Store it now.")
    const narrow = strip(renderBlocks(blocks, 40))
    expect(narrow).toMatch(/│ 6b29d9d3-4663-4e21-904e-4b580a0d393b │/)
    expect(narrow).toMatch(/│ name +laptop +│/)
    for (const line of narrow.trimEnd().split("\n")) expect(line.length).toBeLessThanOrEqual(40)
  })
})
