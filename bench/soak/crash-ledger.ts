/**
 * What the crash part's writers were told: every acknowledged (2xx) write with what must be found
 * afterwards, and the writes whose fate is unknown (the connection died before the answer), which
 * may be present or absent but never half there.
 */

/** One acknowledged write and how to find it whole. */
export type Acknowledged =
  | { readonly kind: "knowledgebase"; readonly id: string; readonly name: string }
  | { readonly kind: "page"; readonly kb: string; readonly id: string; readonly title: string; readonly body: string }
  | { readonly kind: "page patch"; readonly kb: string; readonly id: string; readonly marker: string }
  | { readonly kind: "source"; readonly kb: string; readonly id: string; readonly name: string }
  | { readonly kind: "agent" | "flow" | "app"; readonly id: string; readonly name: string; readonly published: boolean }
  | { readonly kind: "end user"; readonly id: string; readonly email: string; readonly subscription: string }
  | { readonly kind: "group member"; readonly group: string; readonly endUser: string }
  | { readonly kind: "run"; readonly execution: string }
  | { readonly kind: "idempotent create"; readonly key: string; readonly body: unknown; readonly id: string }

/** The writes of one crash run. */
export class Ledger {
  readonly acknowledged: Array<Acknowledged> = []
  /** A page whose last patch's fate is unknown: the marker it would have written. */
  readonly maybeMarkers = new Map<string, string>()
  /** Writes sent whose answer never came. */
  unknown = 0
  /** Writes refused with a 4xx (a bug in the workload or the server; printed). */
  readonly refused: Array<string> = []
  /** 5xx answers. */
  readonly serverErrors: Array<string> = []

  ack(write: Acknowledged): void {
    this.acknowledged.push(write)
  }

  /** Acknowledged writes by kind. */
  counts(): Record<string, number> {
    const counts: Record<string, number> = {}
    for (const write of this.acknowledged) counts[write.kind] = (counts[write.kind] ?? 0) + 1
    return counts
  }
}
