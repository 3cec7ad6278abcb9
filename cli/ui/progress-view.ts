/** What the live progress view draws, shared by the progress reporter and its ink view. */
import type { Tone } from "./blocks.js"

/** How the live view draws: finished steps, then what is going on now. */
export interface ProgressView {
  readonly steps: ReadonlyArray<{ readonly text: string; readonly tone: Tone }>
  readonly current:
    | { readonly kind: "upload"; readonly label: string; readonly sent: number; readonly total: number }
    | { readonly kind: "wait"; readonly text: string; readonly since: number }
    | null
}
