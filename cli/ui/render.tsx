/** Terminal rendering of blocks with ink: key/value boxes, tables and colors. Imported lazily. */
import { Box, renderToString, Text } from "ink"
import type { Block, Tone } from "./blocks.js"

const toneColor: Record<Tone, string> = { success: "green", warning: "yellow", info: "cyan" }
const toneMark: Record<Tone, string> = { success: "✔", warning: "⚠", info: "●" }
const statusColor: Partial<Record<string, string>> = { active: "green", revoked: "red" }
const gap = 2

/**
 * Column widths that fit `available` characters: the first column (the identifier) stays whole,
 * the others shrink (truncated) down to 12 characters; `null` when even that does not fit.
 */
const fitColumns = (natural: ReadonlyArray<number>, available: number): Array<number> | null => {
  const widths = [...natural]
  const total = () => widths.reduce((sum, w) => sum + w, 0) + gap * (widths.length - 1)
  while (total() > available) {
    let widest = -1
    for (let i = 1; i < widths.length; i++) {
      if ((widths[i] ?? 0) > 12 && (widest < 0 || (widths[i] ?? 0) > (widths[widest] ?? 0))) widest = i
    }
    if (widest < 0) return null
    widths[widest] = (widths[widest] ?? 0) - 1
  }
  return widths
}

const Title = ({ text, tone = "success" }: { text: string; tone?: Tone }) => (
  <Text>
    <Text color={toneColor[tone]} bold>
      {toneMark[tone]}{" "}
    </Text>
    <Text bold>{text}</Text>
  </Text>
)

const Fields = ({ rows }: { rows: ReadonlyArray<readonly [string, string]> }) => {
  const width = Math.max(0, ...rows.map(([label]) => label.length)) + gap
  return (
    <Box borderStyle="round" borderColor="gray" paddingX={1} flexDirection="column">
      {rows.map(([label, value]) => (
        <Box key={label}>
          <Box width={width} flexShrink={0}>
            <Text color="cyan">{label}</Text>
          </Box>
          <Text>{value}</Text>
        </Box>
      ))}
    </Box>
  )
}

const Table = ({ columns, rows, width }: { columns: ReadonlyArray<string>; rows: ReadonlyArray<ReadonlyArray<string>>; width: number }) => {
  const natural = columns.map((column, i) => Math.max(column.length, ...rows.map((row) => (row[i] ?? "").length)))
  const widths = fitColumns(natural, width - 4)
  if (widths === null) return <Records columns={columns} rows={rows} />
  const line = (cells: ReadonlyArray<string>, header: boolean, key: string) => (
    <Box key={key}>
      {cells.map((cell, i) => (
        <Box key={i} width={widths[i] ?? 1} marginRight={i === cells.length - 1 ? 0 : gap} flexShrink={0}>
          <Text wrap="truncate-end" bold={header} color={header ? "cyan" : (statusColor[cell] ?? "")}>
            {cell}
          </Text>
        </Box>
      ))}
    </Box>
  )
  return (
    <Box borderStyle="round" borderColor="gray" paddingX={1} flexDirection="column">
      {line(columns.map((c) => c.toUpperCase()), true, "header")}
      {rows.map((row, i) => line(row, false, String(i)))}
    </Box>
  )
}

/** A list too wide for a table: one small record per row, its first cell as the heading. */
const Records = ({ columns, rows }: { columns: ReadonlyArray<string>; rows: ReadonlyArray<ReadonlyArray<string>> }) => {
  const labelWidth = Math.max(...columns.slice(1).map((c) => c.length)) + gap
  return (
    <Box flexDirection="column">
      {rows.map((row, i) => (
        <Box key={i} flexDirection="column" borderStyle="round" borderColor="gray" paddingX={1}>
          <Text bold>{row[0]}</Text>
          {columns.slice(1).map((column, j) => (
            <Box key={column}>
              <Box width={labelWidth} flexShrink={0}>
                <Text color="cyan">{column}</Text>
              </Box>
              <Text color={statusColor[row[j + 1] ?? ""] ?? ""}>{row[j + 1] ?? ""}</Text>
            </Box>
          ))}
        </Box>
      ))}
    </Box>
  )
}

const Secret = ({ label, value, note }: { label: string; value: string; note: string }) => (
  <Box borderStyle="double" borderColor="yellow" paddingX={1} flexDirection="column">
    <Text bold>{label}</Text>
    <Text color="green" bold>
      {value}
    </Text>
    <Text color="yellow">⚠ {note}</Text>
  </Box>
)

const View = ({ blocks, width }: { blocks: ReadonlyArray<Block>; width: number }) => (
  <Box flexDirection="column" alignItems="flex-start">
    {blocks.map((block, i) => {
      switch (block.kind) {
        case "title":
          return <Title key={i} text={block.text} {...(block.tone ? { tone: block.tone } : {})} />
        case "fields":
          return <Fields key={i} rows={block.rows} />
        case "table":
          return block.rows.length === 0 ? (
            <Text key={i} dimColor>
              {block.empty}
            </Text>
          ) : (
            <Table key={i} columns={block.columns} rows={block.rows} width={width} />
          )
        case "secret":
          return <Secret key={i} label={block.label} value={block.value} note={block.note} />
        case "note":
          return (
            <Text key={i} {...(block.tone ? { color: toneColor[block.tone] } : { dimColor: true })}>
              {block.text}
            </Text>
          )
      }
    })}
  </Box>
)

/** Renders blocks for a terminal `width` columns wide, ending with a newline. */
export const renderBlocks = (blocks: ReadonlyArray<Block>, width: number): string =>
  `${renderToString(<View blocks={blocks} width={width} />, { columns: width })}\n`
