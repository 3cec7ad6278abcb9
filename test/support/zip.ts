/** Reading zip archives back in tests, strictly (safe names, sizes checked), with yauzl. */
import { expect } from "vitest"
import yauzl from "yauzl"

/** One entry of an archive, with its bytes. */
export interface ReadEntry {
  readonly name: string
  readonly isDirectory: boolean
  readonly data: Buffer
}

const zipOptions = { lazyEntries: true, strictFileNames: true, validateEntrySizes: true } as const

const readZipEntries = async (zip: yauzl.ZipFile): Promise<Array<ReadEntry>> => {
  const entries: Array<ReadEntry> = []
  try {
    for await (const entry of zip.eachEntry()) {
      const isDirectory = entry.fileName.endsWith("/")
      let data = Buffer.alloc(0)
      if (!isDirectory) {
        const stream = await zip.openReadStreamPromise(entry)
        const chunks: Array<Buffer> = []
        for await (const chunk of stream) chunks.push(chunk as Buffer)
        data = Buffer.concat(chunks)
        expect(data.length).toBe(entry.uncompressedSize)
      }
      entries.push({ name: entry.fileName, isDirectory, data })
    }
  } finally {
    zip.close()
  }
  return entries
}

/** Every entry of the zip file at `path`. */
export const readZipFile = async (path: string) => readZipEntries(await yauzl.openPromise(path, zipOptions))
/** Every entry of a zip held in memory. */
export const readZipBuffer = async (buffer: Buffer) => readZipEntries(await yauzl.fromBufferPromise(buffer, zipOptions))
