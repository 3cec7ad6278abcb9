/**
 * Vectors as stored: unit length (so cosine similarity is a dot product), as the little-endian
 * float32 bytes of a BLOB (SQLite) or BYTEA (PostgreSQL), 4 bytes a dimension.
 */

/** `values` scaled to unit length, as float32; a zero vector stays zero. */
export const unitVector = (values: ReadonlyArray<number>): Float32Array => {
  let norm = 0
  for (const value of values) norm += value * value
  const scale = norm === 0 ? 0 : 1 / Math.sqrt(norm)
  const out = new Float32Array(values.length)
  for (let i = 0; i < values.length; i++) out[i] = values[i]! * scale
  return out
}

/** The stored bytes of a vector. */
export const vectorBytes = (vector: Float32Array): Buffer => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength)

/** The vector of stored bytes (copied when they do not start on a 4-byte boundary). */
export const vectorOf = (bytes: Uint8Array): Float32Array => {
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : new Uint8Array(bytes)
  return new Float32Array(aligned.buffer, aligned.byteOffset, Math.floor(aligned.byteLength / 4))
}

/** The dot product of two vectors of the same length: their cosine similarity when both are unit vectors. */
export const dot = (a: Float32Array, b: Float32Array): number => {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!
  return sum
}
