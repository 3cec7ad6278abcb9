/**
 * A feature of the service: its slice of the contract, the HTTP handlers of that slice, the MCP
 * tools it serves, and any background work `svc serve` runs. The registry in `server/features.ts`
 * lists them; the server, the API and MCP's registry (`server/mcp/registry.ts`) loop over it. The MCP
 * part is opaque here (its type is the MCP door's, `server/mcp-door/family-tools.ts`), so the ground
 * knows no door. Its domain services, which the handlers, the CLI and MCP share, are listed
 * apart, in `server/feature-services.ts`, so administration loads them without any HTTP.
 */
import type { HttpApi } from "@effect/platform"
import { Layer } from "effect"

/** One feature; `http` serves `contract`'s groups, `mcp` lists its MCP tools, each list tagged with its family. */
export interface Feature<
  Contract extends HttpApi.HttpApi.Any = HttpApi.HttpApi.Any,
  Http extends Layer.Layer.Any = Layer.Layer.Any,
  Workers extends Layer.Layer.Any = Layer.Layer<never>,
  Mcp = never
> {
  readonly name: string
  readonly contract: Contract
  readonly http: Http
  readonly workers: Workers
  /** The MCP tools it serves (none: an empty list). */
  readonly mcp: ReadonlyArray<Mcp>
}

/** Declares a feature, keeping the precise types of its parts. */
export const defineFeature = <
  Contract extends HttpApi.HttpApi.Any,
  Http extends Layer.Layer.Any,
  Workers extends Layer.Layer.Any = Layer.Layer<never>,
  Mcp = never
>(feature: {
  readonly name: string
  readonly contract: Contract
  readonly http: Http
  readonly workers?: Workers
  readonly mcp?: ReadonlyArray<Mcp>
}): Feature<Contract, Http, Workers, Mcp> => ({
  ...feature,
  workers: (feature.workers ?? Layer.empty) as Workers,
  mcp: feature.mcp ?? []
})

/** What a union of layers provides, fails with and requires (each distributes over the union). */
type SuccessOf<L> = L extends Layer.Layer<infer A, infer _E, infer _R> ? A : never
type ErrorOf<L> = L extends Layer.Layer<infer _A, infer E, infer _R> ? E : never
type ContextOf<L> = L extends Layer.Layer<infer _A, infer _E, infer R> ? R : never

/** Merges a list of layers into one whose output, error and input are the unions of theirs. */
export const mergeLayers = <L extends Layer.Layer.Any>(layers: ReadonlyArray<L>): Layer.Layer<SuccessOf<L>, ErrorOf<L>, ContextOf<L>> =>
  (layers.length === 0 ? Layer.empty : Layer.mergeAll(...(layers as unknown as [Layer.Layer<never, any, any>, ...Array<Layer.Layer<never, any, any>>]))) as any
