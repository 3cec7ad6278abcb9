/**
 * Deterministic English-like documents for the sources benchmark (bench/sources.ts), and the search
 * queries drawn from the same vocabulary.
 *
 * The vocabulary has {@link vocabularySize} words ranked by frequency: the 100 most frequent English
 * function words first (`the`, `of`, `and`, …), then about 300 real English content words and
 * pseudo-words built from syllables (`velmora`, `trastic`), shuffled together. A token is drawn
 * with a Zipf-like law (probability ∝ 1 / rank^{@link zipfExponent}), except that one token in ten
 * comes from the document's own topic words (eight words of rank 300–5000), so rarer words cluster
 * in the documents about them as they do in real text. Sentences have 5–26 words (a comma now and
 * then, a number sometimes), paragraphs 2–7 sentences; markdown documents also have `##` headings
 * and bullet lists.
 *
 * No two words of the vocabulary share an index term (Porter stem), so a query word's band says how
 * many passages it matches.
 *
 * Everything comes from a seeded PRNG: the same seed gives the same vocabulary, documents and
 * queries on every run and machine.
 */

import Database from "better-sqlite3"

/** mulberry32: small, fast, deterministic. */
export const prng = (seed: number) => {
  let state = seed >>> 0
  return (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
export type Random = ReturnType<typeof prng>

export const vocabularySize = 5_000
export const zipfExponent = 1.05

/** The most frequent English words, most frequent first (they take ranks 1–100). */
const functionWords = (
  "the of and to a in is that for it as was with be by on not he this are or his from at which but have an they you " +
  "were her she there one been all their has would will more if no when so can what who out about up into them some " +
  "could him than its time only other then do two these may any first new like now over also should such our most " +
  "after where how very made through must before well between each many those both under because same while during " +
  "without"
).split(" ")

/** Real English content words, spread over ranks 101–5000 with the pseudo-words. */
const contentWords = (
  "customer account order refund payment policy service update release data system agent page owner change issue " +
  "ticket plan week month quarter approval manager document version budget region partner contract invoice delivery " +
  "schedule response escalation incident priority queue report metric target feedback training access permission " +
  "backup storage network client server deploy rollback test checks confirms records sends reviews approves rejects " +
  "tracks updates closes opens assigns measures explains product engineering support sales marketing operations " +
  "finance people legal security guide runbook reference onboarding project template decision meeting archive draft " +
  "region shipping warehouse inventory supplier vendor procurement purchase receipt expense travel mileage allowance " +
  "holiday leave benefit salary payroll hiring interview candidate offer contractor laptop password login session " +
  "token certificate encryption firewall audit compliance retention deletion export import migration schema index " +
  "query search result latency throughput capacity outage maintenance window upgrade patch vulnerability exploit " +
  "phishing training handbook checklist procedure workflow pipeline dashboard analytics forecast revenue margin " +
  "discount pricing subscription renewal cancellation trial upgrade downgrade invoice credit debit balance ledger " +
  "reconciliation tax vat jurisdiction regulation consent privacy cookie tracking newsletter campaign audience brand " +
  "logo design prototype usability accessibility translation localization timezone calendar reminder notification " +
  "email message chat call voicemail escalate resolve reopen merge duplicate attachment screenshot log trace alert " +
  "threshold quota limit rate burst retry timeout fallback cache replica shard cluster node container image registry " +
  "volume snapshot restore disaster recovery continuity insurance claim liability warranty return exchange repair " +
  "courier parcel pallet freight customs tariff carrier tracking dispatch pickup"
)
  .split(" ")
  .filter((word, i, all) => all.indexOf(word) === i)

const onsets = ["b", "br", "c", "ch", "cl", "d", "dr", "f", "fl", "g", "gr", "h", "j", "k", "l", "m", "n", "p", "pl", "pr", "qu", "r", "s", "sh", "sl", "st", "t", "th", "tr", "v", "w", "z"]
const vowels = ["a", "e", "i", "o", "u", "ai", "ea", "ou", "io", "y"]
const codas = ["", "", "", "n", "r", "l", "s", "t", "m", "nd", "st", "ck", "rn", "x"]
const endings = ["", "", "", "", "ing", "ed", "er", "ion", "ity", "al", "ous", "ment", "ic", "ly", "ate", "ism"]

/**
 * The index's term for each word: FTS5's own `porter unicode61` tokenizer, run on an in-memory
 * table (so the vocabulary can avoid two words sharing a term, e.g. `byed` and `by`).
 */
export const porterTerms = (words: ReadonlyArray<string>): Array<string> => {
  const db = new Database(":memory:")
  try {
    db.exec("CREATE VIRTUAL TABLE w USING fts5(t, tokenize='porter unicode61'); CREATE VIRTUAL TABLE v USING fts5vocab(w, instance)")
    const insert = db.prepare("INSERT INTO w (rowid, t) VALUES (?, ?)")
    db.transaction(() => words.forEach((word, i) => insert.run(i + 1, word)))()
    const terms = new Array<string>(words.length).fill("")
    for (const row of db.prepare("SELECT term, doc FROM v").all() as Array<{ term: string; doc: number }>) terms[row.doc - 1] = row.term
    return terms
  } finally {
    db.close()
  }
}

/**
 * The vocabulary, most frequent first (index = rank - 1). No two words share an index term (the
 * Porter stem): a word of the rare band never matches the passages of a common one.
 */
export const buildVocabulary = (seed = 7): ReadonlyArray<string> => {
  const random = prng(seed)
  const terms = new Set<string>()
  const accept = (words: ReadonlyArray<string>): Array<string> => {
    const stems = porterTerms(words)
    return words.filter((_, i) => {
      const stem = stems[i]!
      if (stem === "" || terms.has(stem)) return false
      terms.add(stem)
      return true
    })
  }
  const common = accept(functionWords)
  const content = accept(contentWords)
  const pseudo: Array<string> = []
  const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!
  const seen = new Set([...functionWords, ...contentWords])
  while (common.length + content.length + pseudo.length < vocabularySize) {
    const batch: Array<string> = []
    while (batch.length < 500) {
      const syllables = 1 + Math.floor(random() * 3)
      let word = ""
      for (let s = 0; s < syllables; s++) word += pick(onsets) + pick(vowels) + (s === syllables - 1 ? pick(codas) : "")
      word += pick(endings)
      if (word.length < 4 || word.length > 14 || seen.has(word)) continue
      seen.add(word)
      batch.push(word)
    }
    pseudo.push(...accept(batch))
  }
  pseudo.length = vocabularySize - common.length - content.length
  const rest = [...content, ...pseudo]
  for (let i = rest.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[rest[i], rest[j]] = [rest[j]!, rest[i]!]
  }
  return [...common, ...rest]
}

/** Draws ranks (0-based) with probability ∝ 1 / (rank + 1)^s, by binary search on the cumulative weights. */
export const zipfSampler = (size: number, exponent: number) => {
  const cumulative = new Float64Array(size)
  let sum = 0
  for (let r = 0; r < size; r++) {
    sum += 1 / Math.pow(r + 1, exponent)
    cumulative[r] = sum
  }
  return (random: Random): number => {
    const target = random() * sum
    let low = 0
    let high = size - 1
    while (low < high) {
      const middle = (low + high) >> 1
      if (cumulative[middle]! < target) low = middle + 1
      else high = middle
    }
    return low
  }
}

export type DocumentFormat = "txt" | "md"

export interface GeneratedDocument {
  readonly index: number
  readonly name: string
  readonly format: DocumentFormat
  readonly text: string
}

/** Generates documents of a corpus; document `i` depends only on the seed and `i`. */
export const corpus = (options: { readonly seed?: number; readonly minBytes?: number; readonly maxBytes?: number; readonly markdownShare?: number } = {}) => {
  const seed = options.seed ?? 2024
  const minBytes = options.minBytes ?? 8_000
  const maxBytes = options.maxBytes ?? 800_000
  const markdownShare = options.markdownShare ?? 0.25
  const vocabulary = buildVocabulary(seed ^ 0x5eed)
  const zipf = zipfSampler(vocabulary.length, zipfExponent)

  const capital = (word: string) => word.charAt(0).toUpperCase() + word.slice(1)

  const generate = (index: number): GeneratedDocument => {
    const random = prng((seed * 1_000_003 + index * 7_919) >>> 0)
    // log-uniform size between minBytes and maxBytes (mean ≈ 170 KB for the defaults)
    const size = Math.round(minBytes * Math.pow(maxBytes / minBytes, random()))
    const format: DocumentFormat = random() < markdownShare ? "md" : "txt"
    const topic = Array.from({ length: 8 }, () => vocabulary[300 + Math.floor(random() * (vocabulary.length - 300))]!)
    const word = (): string => (random() < 0.1 ? topic[Math.floor(random() * topic.length)]! : vocabulary[zipf(random)]!)
    const sentence = (): string => {
      const length = 5 + Math.floor(random() * 22)
      const words: Array<string> = []
      for (let w = 0; w < length; w++) {
        let token = random() < 0.012 ? String(Math.floor(random() * (random() < 0.5 ? 100 : 10_000))) : word()
        if (w < length - 1 && random() < 0.06) token += ","
        words.push(token)
      }
      words[0] = capital(words[0]!)
      const end = random()
      return `${words.join(" ")}${end < 0.9 ? "." : end < 0.96 ? "?" : "!"}`
    }
    const paragraph = (): string => Array.from({ length: 2 + Math.floor(random() * 6) }, sentence).join(" ")
    const title = Array.from({ length: 3 + Math.floor(random() * 4) }, () => capital(topic[Math.floor(random() * topic.length)]!)).join(" ")
    const name = `${title} (${String(index).padStart(4, "0")})`.slice(0, 200)

    const parts: Array<string> = [format === "md" ? `# ${title}` : title]
    let length = parts[0]!.length
    let sinceHeading = 0
    while (length < size) {
      let block: string
      if (format === "md" && sinceHeading >= 3 + Math.floor(random() * 4)) {
        block = `## ${capital(word())} ${word()} ${word()}`
        sinceHeading = 0
      } else if (format === "md" && random() < 0.12) {
        block = Array.from({ length: 3 + Math.floor(random() * 4) }, () => `- ${sentence()}`).join("\n")
        sinceHeading++
      } else {
        block = paragraph()
        sinceHeading++
      }
      parts.push(block)
      length += block.length + 2
    }
    return { index, name, format, text: `${parts.join("\n\n")}\n` }
  }

  return { vocabulary, generate }
}

/** The query classes of the search benchmark, by the Zipf rank (1-based) of their words. */
export const rankBands = {
  /** function words: most of them occur in most passages */
  common: [1, 30],
  /** content words a few thousand passages hold */
  mid: [301, 1_500],
  /** the tail: tens to a few hundred passages */
  rare: [1_501, 5_000]
} as const
export type Band = keyof typeof rankBands

/** `count` queries of `shape` words (each word from its band), deterministic for a seed. */
export const queries = (vocabulary: ReadonlyArray<string>, shape: ReadonlyArray<Band>, count: number, seed: number): Array<string> => {
  const random = prng(seed)
  const out: Array<string> = []
  while (out.length < count) {
    const words = shape.map((band) => {
      const [low, high] = rankBands[band]
      return vocabulary[low - 1 + Math.floor(random() * (high - low + 1))]!
    })
    if (new Set(words).size === words.length) out.push(words.join(" "))
  }
  return out
}
