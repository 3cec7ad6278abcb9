/**
 * "A grant target exists in this organization", once: a grant names an App, a Flow or an Agent
 * (`app`), answered by the builder, or a Suite, answered by Suites. Group grants, per-user grants
 * at provisioning and the access a grant still gives all ask here.
 */
import { builderItemIdsTx } from "../../builder/versions/items-repo.js"
import type { TxBody } from "../../platform/sql/write-fast-path.js"
import { suiteIdsTx } from "../suites/repo.js"

/** What a grant names. */
export type GrantTargetKind = "app" | "suite"

/** Which of `ids` name a target of `kind` in the organization (a transaction body step). */
export function* grantTargetIdsTx(organizationId: string, kind: GrantTargetKind, ids: ReadonlyArray<string>): TxBody<Set<string>> {
  return kind === "suite" ? yield* suiteIdsTx(organizationId, ids) : yield* builderItemIdsTx(organizationId, ids)
}
