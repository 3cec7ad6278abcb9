/** The base of generated resource classes and the types their method signatures use. */
import type { ApiClient } from "./client.js"

/** Query values: numbers and booleans are accepted wherever the document says string (they travel as text). */
type QueryValue<V> = V extends string ? (string extends V ? V | number | boolean : V) : V

/** The query parameters of an operation, as its resource method takes them; optional ones may be `undefined`. */
export type QueryParams<Q> = { [K in keyof Q]: QueryValue<Q[K]> | ({} extends Pick<Q, K> ? undefined : never) }

/** A group of operations (one OpenAPI tag), bound to a client. */
export abstract class Resource {
  constructor(protected readonly client: ApiClient) {}
}
