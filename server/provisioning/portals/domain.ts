/** Portals: the web pages where an organization's end users sign in and run what they were granted. */
import { Schema } from "effect"
import { DateTime, Uuid } from "../../platform/schema.js"

/** A Portal as `GET /portals` lists it. */
export const Portal = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  createdAt: DateTime
}).annotations({ identifier: "Portal" })
export type Portal = typeof Portal.Type

/** A Portal row. */
export interface PortalRow {
  readonly id: string
  readonly organization_id: string
  readonly name: string
  readonly created_at: string
}

/** A Portal row as the API shows it. */
export const toPortal = (row: PortalRow): Portal => ({ id: row.id, name: row.name, createdAt: row.created_at })
