/** The outcome of one outside check, as the conformance run reports it. */
export interface CheckResult {
  /** What was checked, e.g. `MCP conformance: ping`. */
  readonly name: string
  /** False only for a failure; a check that does not apply to svc is not one. */
  readonly ok: boolean
  /** Set for a check that does not apply to svc (reported with its reason, never failing the run). */
  readonly notApplicable?: true
  /** One line: what passed, why it failed, or why it does not apply. */
  readonly detail: string
}

/** A passed check. */
export const passed = (name: string, detail: string): CheckResult => ({ name, ok: true, detail })

/** A failed check. */
export const failed = (name: string, detail: string): CheckResult => ({ name, ok: false, detail })

/** A check that does not apply to svc, and why. */
export const notApplicable = (name: string, detail: string): CheckResult => ({ name, ok: true, notApplicable: true, detail })
