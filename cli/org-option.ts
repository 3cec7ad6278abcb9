/**
 * `--org <slug>` of the admin commands that act in one organization. It may be left out when the
 * data directory holds exactly one organization: the command then acts in that one. With several,
 * leaving it out is bad usage (exit 2) naming the choices; with none it is refused (exit 1).
 *
 * A command left without `--org` is noted here before its action runs (commander's `preAction`
 * hook); `admin` (cli/admin.ts) then fills in the slug, from the organizations it reads in the same
 * run, before the command's effect reads `options.org`.
 */
import type { Command } from "commander"
import { type CliError, failure, usage } from "./errors.js"

/** The option values (commander's own object, the one the action gets) of runs left without `--org`. */
const leftOut = new WeakSet<object>()

/** The help of `--org`. */
export const orgHelp = "the organization (may be left out when the data directory holds exactly one)"

/**
 * The `preAction` hook of a command that takes `--org`: notes a run left without it. Declare the
 * option as `.option("--org <slug>", orgHelp).hook("preAction", noteOrgLeftOut)`.
 */
export const noteOrgLeftOut = (self: Command): void => {
  const options = self.opts()
  if (options.org === undefined) leftOut.add(options)
}

/** Whether these option values are of a command run without the `--org` it takes. */
export const isOrgLeftOut = (options: object): boolean => leftOut.has(options)

/**
 * Fills in `--org` from the data directory's organizations (their slugs): the only one, else the
 * failure to report, which names the path and the choices. Writes the slug into `options`, which
 * the command reads from then on.
 */
export const fillInOrg = (options: { org?: string | undefined }, slugs: ReadonlyArray<string>, where: string): CliError | undefined => {
  if (slugs.length === 1) {
    options.org = slugs[0]
    return undefined
  }
  if (slugs.length === 0) {
    return failure(`no organization in ${where} yet; create one with svc orgs create --slug S.`, "no_organization")
  }
  return usage(`pass --org: ${where} holds ${slugs.length} organizations (${slugs.join(", ")}).`)
}
