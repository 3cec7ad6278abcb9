/**
 * What an admin run does before the command's own effect, in the same run (one opening of the
 * database):
 * - waits out a first start in progress: `svc serve` made the data directory a moment ago
 *   (`bootstrap-key-pending` is there and recent) and has not yet made organization `default` and
 *   its key, so a command run right after `svc serve` sees what the first start makes;
 * - fills in a left-out `--org` when the data directory holds exactly one organization
 *   (`org-option.ts`).
 * Nothing is loaded or run when neither applies.
 */
import { statSync } from "node:fs"
import type { Effect, Layer } from "effect"
import type { AdminBase } from "../server/admin-base.js"
import type { AccountsService } from "../server/identity/service.js"
import { pendingFile } from "./commands/bootstrap-key.js"
import type { CliError } from "./errors.js"
import { fillInOrg, isOrgLeftOut } from "./org-option.js"

/** How long after `svc serve` recorded a first start an admin command still waits for it. */
export const firstStartWaitMs = 30_000

/** How often a waiting command looks again. */
const pollMs = 50

/**
 * When a first start of the SQLite data directory `dataDir` may still be under way, the moment to
 * stop waiting for it; otherwise undefined.
 */
export const firstStartDeadline = (dataDir: string): number | undefined => {
  try {
    const deadline = statSync(pendingFile(dataDir)).mtimeMs + firstStartWaitMs
    return Date.now() < deadline ? deadline : undefined
  } catch {
    return undefined
  }
}

/** The services the prelude uses and its effect, which fails with the CLI's own error. */
export interface AdminPrelude {
  readonly services: Layer.Layer<AccountsService, unknown, AdminBase>
  readonly effect: Effect.Effect<void, CliError, AccountsService>
}

/**
 * The prelude of one admin run on `dataDir` (SQLite, `database` undefined) or a PostgreSQL
 * database, or undefined when there is nothing to do. `where` names the data for messages.
 */
export const adminPrelude = async (
  options: object,
  dataDir: string,
  database: string | undefined,
  where: string
): Promise<AdminPrelude | undefined> => {
  const orgLeftOut = isOrgLeftOut(options)
  const deadline = database === undefined ? firstStartDeadline(dataDir) : undefined
  if (!orgLeftOut && deadline === undefined) return undefined
  const [{ AccountsService }, Effect] = await Promise.all([import("../server/identity/service.js"), import("effect/Effect")])
  const waitForFirstStart = (accounts: AccountsService): Effect.Effect<void> =>
    Effect.flatMap(accounts.bootstrapped, (done) =>
      done || deadline === undefined || Date.now() >= deadline
        ? Effect.void
        : Effect.zipRight(Effect.sleep(pollMs), Effect.suspend(() => waitForFirstStart(accounts)))
    )
  const fillIn = (accounts: AccountsService): Effect.Effect<void, CliError> =>
    orgLeftOut
      ? Effect.flatMap(accounts.organizations, (organizations) => {
          const refusal = fillInOrg(options as { org?: string | undefined }, organizations.map((org) => org.slug), where)
          return refusal === undefined ? Effect.void : Effect.fail(refusal)
        })
      : Effect.void
  return {
    services: AccountsService.Default,
    effect: Effect.flatMap(AccountsService, (accounts) => Effect.zipRight(waitForFirstStart(accounts), fillIn(accounts)))
  }
}
