/**
 * A multi-page text PDF for the sources benchmark (bench/sources.ts): Letter pages in Helvetica 10,
 * each a heading and paragraphs of the benchmark's generated prose, wrapped to the page width and
 * filling the page (about 55 lines, 3–4 KB of text a page). Deterministic for a seed; fixed
 * metadata, so the same seed gives the same bytes.
 */
import { PDFDocument, StandardFonts } from "pdf-lib"
import { corpus } from "./sources-corpus.js"

const pageSize: [number, number] = [612, 792]
const margin = 54
const bodySize = 10
const headingSize = 16
const lineHeight = 13
const fixedDate = new Date("2024-05-01T12:00:00Z")

export interface BuiltPdf {
  readonly bytes: Uint8Array
  readonly pages: number
  /** Characters of text drawn (headings and body lines). */
  readonly textChars: number
}

/** Builds a PDF of `pages` pages whose prose comes from corpus document `seed`, `seed + 1`, …. */
export const buildBenchPdf = async (pages: number, seed: number): Promise<BuiltPdf> => {
  const doc = await PDFDocument.create({ updateMetadata: false })
  doc.setTitle(`Sources benchmark PDF ${seed}`)
  doc.setProducer("svc bench/sources-pdf.ts")
  doc.setCreator("svc bench/sources-pdf.ts")
  doc.setCreationDate(fixedDate)
  doc.setModificationDate(fixedDate)
  const body = await doc.embedFont(StandardFonts.Helvetica)
  const bold = await doc.embedFont(StandardFonts.HelveticaBold)
  const maxWidth = pageSize[0] - 2 * margin
  // prose: paragraphs of generated documents (a different corpus seed from the uploaded text)
  const prose = corpus({ seed: 90_000 + seed, minBytes: 60_000, maxBytes: 120_000, markdownShare: 0 })
  let source = 0
  let paragraphs: Array<string> = []
  const nextParagraph = (): string => {
    while (paragraphs.length === 0) paragraphs = prose.generate(source++).text.split("\n\n").slice(1)
    return paragraphs.shift()!
  }
  // Words are measured once each (widthOfTextAtSize is slow on whole lines).
  const widths = new Map<string, number>()
  const space = body.widthOfTextAtSize(" ", bodySize)
  const widthOf = (word: string) => {
    let width = widths.get(word)
    if (width === undefined) {
      width = body.widthOfTextAtSize(word, bodySize)
      widths.set(word, width)
    }
    return width
  }
  let textChars = 0
  let carry: Array<string> = []
  for (let p = 1; p <= pages; p++) {
    const page = doc.addPage(pageSize)
    let y = pageSize[1] - margin
    const heading = `Section ${p}`
    page.drawText(heading, { x: margin, y, size: headingSize, font: bold })
    textChars += heading.length
    y -= 2 * lineHeight
    while (y > margin) {
      const words = carry.length > 0 ? carry : nextParagraph().trim().split(/\s+/)
      carry = []
      let line: Array<string> = []
      let width = 0
      for (let i = 0; i < words.length; i++) {
        const word = words[i]!
        const w = widthOf(word)
        if (line.length > 0 && width + space + w > maxWidth) {
          page.drawText(line.join(" "), { x: margin, y, size: bodySize, font: body })
          textChars += line.join(" ").length
          y -= lineHeight
          line = []
          width = 0
          if (y <= margin) {
            carry = words.slice(i)
            break
          }
        }
        width += (line.length > 0 ? space : 0) + w
        line.push(word)
      }
      if (carry.length > 0) break
      if (line.length > 0) {
        page.drawText(line.join(" "), { x: margin, y, size: bodySize, font: body })
        textChars += line.join(" ").length
        y -= lineHeight
      }
      y -= lineHeight / 2
    }
  }
  return { bytes: await doc.save(), pages, textChars }
}
