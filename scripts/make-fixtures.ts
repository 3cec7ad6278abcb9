/**
 * Builds the binary PDF fixtures under `fixtures/` used by the extraction tests
 * (`test/knowledge/extract.test.ts`). The text fixtures (`customers.csv`, `notes.txt`, `guide.md`,
 * `page.html`) are written by hand; only the PDFs need a generator.
 *
 * The output is deterministic: no "now" timestamps, no random document ids, fixed metadata, so
 * running the script again reproduces the committed files byte for byte (the tests check this).
 *
 * Run it after `npm run build` as `node dist/scripts/make-fixtures.js [outDir]`; `outDir` defaults
 * to `fixtures/` at the repository root. It writes:
 *
 * - `handbook.pdf`: three Letter pages of text in Helvetica (see {@link handbookPages}).
 * - `scanned.pdf`: one page with only drawn shapes and no text, like a scan without OCR.
 * - `encrypted.pdf`: a small document whose trailer carries a Standard security handler that no
 *   empty password opens, so readers ask for a password.
 * - `broken.pdf`: the first 40% of `handbook.pdf`'s bytes, a truncated download.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { PDFDocument, PDFHexString, PDFName, rgb, StandardFonts } from "pdf-lib"

/** A fixed date for the PDF metadata, so the bytes never depend on when the script ran. */
const fixedDate = new Date("2024-05-01T12:00:00Z")

/** One page of the handbook: a heading and its paragraphs (each wrapped to the page width). */
export interface HandbookPage {
  readonly heading: string
  readonly paragraphs: ReadonlyArray<string>
}

/** The text of `handbook.pdf`, page by page. */
export const handbookPages: ReadonlyArray<HandbookPage> = [
  {
    heading: "Acme Field Handbook",
    paragraphs: [
      "Welcome to Acme. This handbook explains how field teams plan visits, report incidents and claim expenses. Read it once before your first assignment and keep it nearby.",
      "Meetings with customers at a café are fine; the €25 meal allowance covers one drink and a light meal for each person attending."
    ]
  },
  {
    heading: "Expenses",
    paragraphs: [
      "Submit every expense claim within 30 days of the purchase. Attach a photo of the receipt; claims without a receipt are refused.",
      "Mileage is reimbursed at 0.45 per kilometre for private cars. Rental cars must be booked through the travel desk, never on a personal card."
    ]
  },
  {
    heading: "Incidents",
    paragraphs: [
      "Report every safety incident to the duty manager within 24 hours, even when nobody was hurt.",
      "The incident form asks for the place, the time, the people involved and what was done afterwards. Keep a copy for your own records."
    ]
  }
]

const pageSize: [number, number] = [612, 792]
const margin = 72
const bodySize = 12
const headingSize = 20
const lineHeight = 16

/** Applies the fixed metadata every fixture carries. */
const stamp = (doc: PDFDocument, title: string): void => {
  doc.setTitle(title)
  doc.setAuthor("svc fixtures")
  doc.setProducer("svc scripts/make-fixtures.ts")
  doc.setCreator("svc scripts/make-fixtures.ts")
  doc.setCreationDate(fixedDate)
  doc.setModificationDate(fixedDate)
}

/** The demo's price list and product sheet (`demo/price-list.pdf`), page by page. */
export const priceListPages: ReadonlyArray<HandbookPage> = [
  {
    heading: "Northwind price list",
    paragraphs: [
      "Refurbished office furniture, inspected and cleaned in Rotterdam. Prices in EUR, VAT excluded, valid until the end of the year.",
      "Ergonomic task chair, graded A: 189. Graded B (small marks on the frame): 149. Conference chair, stackable: 59.",
      "Height-adjustable desk, 160 by 80 cm, electric: 429. Fixed desk, 140 by 70 cm: 119. Meeting table for eight: 349."
    ]
  },
  {
    heading: "Volume discounts",
    paragraphs: [
      "Orders of 20 chairs or more get 10% off the chairs; orders over 5,000 EUR get free delivery anywhere in the EU.",
      "Teams of more than 50 people can book a free planning call: we measure the floor plan and propose a layout within a week."
    ]
  },
  {
    heading: "Product care",
    paragraphs: [
      "Clean upholstery with a damp cloth and mild soap; never use solvents on the armrests.",
      "Tighten the seat bolts after the first month of use. Castors for carpet and for hard floors are swapped without tools."
    ]
  }
]

/** Builds a text PDF: one page per entry, a bold heading, paragraphs separated by a blank line. */
const buildTextPdf = async (title: string, pages: ReadonlyArray<HandbookPage>): Promise<Uint8Array> => {
  const doc = await PDFDocument.create({ updateMetadata: false })
  stamp(doc, title)
  const body = await doc.embedFont(StandardFonts.Helvetica)
  const bold = await doc.embedFont(StandardFonts.HelveticaBold)
  const maxWidth = pageSize[0] - 2 * margin
  for (const { heading, paragraphs } of pages) {
    const page = doc.addPage(pageSize)
    let y = pageSize[1] - margin
    page.drawText(heading, { x: margin, y, size: headingSize, font: bold })
    y -= 2 * lineHeight
    for (const paragraph of paragraphs) {
      let line = ""
      const lines: Array<string> = []
      for (const word of paragraph.split(" ")) {
        const candidate = line === "" ? word : `${line} ${word}`
        if (line !== "" && body.widthOfTextAtSize(candidate, bodySize) > maxWidth) {
          lines.push(line)
          line = word
        } else {
          line = candidate
        }
      }
      if (line !== "") lines.push(line)
      for (const text of lines) {
        page.drawText(text, { x: margin, y, size: bodySize, font: body })
        y -= lineHeight
      }
      y -= lineHeight
    }
  }
  return doc.save()
}

/** Builds `handbook.pdf`: one page per {@link handbookPages} entry. */
export const buildHandbookPdf = (): Promise<Uint8Array> => buildTextPdf("Acme Field Handbook", handbookPages)

/** Builds `scanned.pdf`: a page of drawn shapes with no text operators at all. */
export const buildScannedPdf = async (): Promise<Uint8Array> => {
  const doc = await PDFDocument.create({ updateMetadata: false })
  stamp(doc, "Scanned page")
  const page = doc.addPage(pageSize)
  page.drawRectangle({ x: margin, y: 500, width: 300, height: 200, color: rgb(0.85, 0.85, 0.85) })
  for (let i = 0; i < 12; i++) {
    page.drawLine({
      start: { x: margin, y: 460 - i * 18 },
      end: { x: margin + 420 - (i % 3) * 60, y: 460 - i * 18 },
      thickness: 6,
      color: rgb(0.2, 0.2, 0.2)
    })
  }
  return doc.save()
}

/**
 * Builds `encrypted.pdf`: a one-page document whose trailer names a Standard security handler
 * (RC4, revision 2) with `O`/`U` entries that match no password, so a reader cannot open it without
 * one. The page content itself is not really encrypted; a reader gives up before reading it.
 */
export const buildEncryptedPdf = async (): Promise<Uint8Array> => {
  const doc = await PDFDocument.create({ updateMetadata: false })
  stamp(doc, "Locked")
  const font = await doc.embedFont(StandardFonts.Helvetica)
  doc.addPage(pageSize).drawText("Top secret payroll figures.", { x: margin, y: 700, size: bodySize, font })
  const context = doc.context
  const encrypt = context.obj({
    Filter: PDFName.of("Standard"),
    V: 1,
    R: 2,
    Length: 40,
    P: -44,
    O: PDFHexString.of("5a".repeat(32)),
    U: PDFHexString.of("a5".repeat(32))
  })
  context.trailerInfo.Encrypt = context.register(encrypt)
  const id = PDFHexString.of("00112233445566778899aabbccddeeff")
  context.trailerInfo.ID = context.obj([id, id])
  return doc.save({ useObjectStreams: false })
}

/** Builds `broken.pdf`: `handbook.pdf` cut off after 40% of its bytes. */
export const buildBrokenPdf = async (): Promise<Uint8Array> => {
  const whole = await buildHandbookPdf()
  return whole.slice(0, Math.floor(whole.length * 0.4))
}

/** Every generated fixture, by file name under `fixtures/`. */
export const buildPdfFixtures = async (): Promise<Record<string, Uint8Array>> => ({
  "handbook.pdf": await buildHandbookPdf(),
  "scanned.pdf": await buildScannedPdf(),
  "encrypted.pdf": await buildEncryptedPdf(),
  "broken.pdf": await buildBrokenPdf(),
  "demo/price-list.pdf": await buildTextPdf("Northwind price list", priceListPages)
})

/** The repository root: the nearest folder above this file holding a `package.json`. */
const repoRoot = (): string => {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error("No package.json above scripts/make-fixtures")
    dir = parent
  }
  return dir
}

const writeFixtures = async (outDir: string): Promise<void> => {
  mkdirSync(outDir, { recursive: true })
  for (const [name, bytes] of Object.entries(await buildPdfFixtures())) {
    const target = join(outDir, name)
    mkdirSync(dirname(target), { recursive: true })
    writeFileSync(target, bytes)
    console.log(`wrote ${relative(process.cwd(), target)} (${bytes.length} bytes)`)
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const outDir = process.argv[2] !== undefined ? resolve(process.argv[2]) : join(repoRoot(), "fixtures")
  writeFixtures(outDir).catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
}
