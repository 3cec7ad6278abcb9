/**
 * Finds the SQL written in the server's TypeScript, for the ownership test
 * (`test/platform/sql-ownership.test.ts`). A file holds SQL where it has an `sql` tagged template
 * (`@effect/sql`), a `.unsafe(` call, or a string or template literal that reads as a statement
 * (`SELECT …`, `INSERT INTO`, `UPDATE … SET`, `DELETE FROM`, `CREATE TABLE|INDEX|TRIGGER`, `PRAGMA`,
 * `ON CONFLICT`, or a fragment's `FROM t [alias] WHERE|JOIN`): the texts `ReadConnection`, `txAll`/`txRun` bodies and `sql.unsafe` run. Comments
 * are not code and never count. The tables a text names are those after `FROM`, `JOIN`, `INTO`,
 * `UPDATE` or `TABLE`; a table named through an interpolation (`${sql(table)}`) is not seen.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import ts from "typescript"

/** One piece of SQL in a file. */
export interface SqlText {
  /** 1-based line of the literal or call. */
  readonly line: number
  /** How it was written. */
  readonly form: "sql template" | "unsafe call" | "string"
  /** The text, interpolations shown as `${…}`. */
  readonly text: string
  /** The known tables it names. */
  readonly tables: ReadonlyArray<string>
}

/** A statement's opening words, as SQL is written in svc (upper case). */
const statementPattern =
  /\b(?:SELECT\s+(?:[\w*'(]|\$\{)|INSERT\s+INTO\b|UPDATE\s+(?:\w+|\$\{[^}]*\})\s+SET\b|DELETE\s+FROM\b|CREATE\s+(?:TABLE|INDEX|UNIQUE\s+INDEX|TRIGGER|VIRTUAL\s+TABLE)\b|PRAGMA\s+\w|ON\s+CONFLICT\b|FROM\s+\w+(?:\s+\w+)?\s+(?:WHERE|JOIN)\b)/

/** Words after which a table is named. */
const tableReference = /\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+(\w+)/g

/** The text of a string or template literal, interpolations as `${…}`. */
const literalText = (node: ts.StringLiteral | ts.NoSubstitutionTemplateLiteral | ts.TemplateExpression): string =>
  ts.isTemplateExpression(node) ? node.head.text + node.templateSpans.map((span) => "${…}" + span.literal.text).join("") : node.text

/** The SQL texts of one source text, naming only `tables`. */
export const sqlOfSource = (fileName: string, source: string, tables: ReadonlySet<string>): Array<SqlText> => {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const found: Array<SqlText> = []
  const add = (node: ts.Node, form: SqlText["form"], text: string) =>
    found.push({
      line: file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1,
      form,
      text,
      tables: [...new Set([...text.matchAll(tableReference)].map((match) => match[1]!).filter((name) => tables.has(name)))]
    })
  const visit = (node: ts.Node): void => {
    if (ts.isTaggedTemplateExpression(node) && ts.isIdentifier(node.tag) && node.tag.text === "sql") {
      const template = node.template
      add(node, "sql template", ts.isTemplateExpression(template) ? literalText(template) : template.text)
      if (ts.isTemplateExpression(template)) for (const span of template.templateSpans) visit(span.expression)
      return
    }
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === "unsafe") {
      const first = node.arguments[0]
      add(node, "unsafe call", first === undefined ? "" : first.getText(file))
    }
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) {
      const text = literalText(node)
      if (statementPattern.test(text)) add(node, "string", text)
      if (ts.isTemplateExpression(node)) for (const span of node.templateSpans) visit(span.expression)
      return
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

/** Every `.ts` file under `dir` (declaration files left out), as paths relative to `root`. */
export const typeScriptFiles = (root: string, dir: string): Array<string> =>
  readdirSync(join(root, dir))
    .sort()
    .flatMap((name) => {
      const path = join(dir, name)
      if (statSync(join(root, path)).isDirectory()) return typeScriptFiles(root, path)
      return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [relative(root, join(root, path))] : []
    })

/** The tables the migrations (and the PostgreSQL set-up) create. */
export const createdTables = (root: string): Set<string> => {
  const tables = new Set<string>()
  for (const path of typeScriptFiles(root, "server/platform/sql")) {
    const text = readFileSync(join(root, path), "utf8")
    for (const match of text.matchAll(/CREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)/g)) tables.add(match[1]!)
  }
  return tables
}
