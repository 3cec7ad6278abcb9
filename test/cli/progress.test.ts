import { renderToString } from "ink"
import { createElement } from "react"
import { describe, expect, it } from "vitest"
import { plainProgress } from "../../cli/progress.js"
import { bar, ProgressViewer } from "../../cli/ui/progress.js"

const strip = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "")

describe("progress", () => {
  it("prints plain lines: the start, at most one a second while uploading, and each step", () => {
    const lines: string[] = []
    let now = 0
    const progress = plainProgress((line) => lines.push(line), () => now)
    progress.upload("big.pdf", 0, 4_000_000)
    now = 500
    progress.upload("big.pdf", 1_000_000, 4_000_000)
    now = 1200
    progress.upload("big.pdf", 2_000_000, 4_000_000)
    progress.upload("big.pdf", 4_000_000, 4_000_000)
    progress.step("uploaded big.pdf (4.0 MB)")
    progress.wait("indexing big.pdf")
    progress.wait("indexing big.pdf")
    progress.step("indexed big.pdf: ready")
    expect(lines).toEqual([
      "uploading big.pdf",
      "uploading big.pdf: 50% (2.0 MB of 4.0 MB)",
      "uploaded big.pdf (4.0 MB)",
      "indexing big.pdf",
      "indexed big.pdf: ready"
    ])
  })

  it("draws a bar and finished steps on a terminal", () => {
    expect(bar(0)).toBe("░".repeat(30))
    expect(bar(0.5)).toBe("█".repeat(15) + "░".repeat(15))
    expect(bar(2)).toBe("█".repeat(30))
    const view = {
      steps: [{ text: "uploaded a.txt (1.0 KB)", tone: "success" as const }],
      current: { kind: "upload" as const, label: "b.pdf", sent: 500, total: 1000 }
    }
    const text = strip(renderToString(createElement(ProgressViewer, { view }), { columns: 100 }))
    expect(text).toBe(`✔ uploaded a.txt (1.0 KB)\nuploading b.pdf ${"█".repeat(15)}${"░".repeat(15)} 50% 500 B / 1.0 KB`)
  })
})
