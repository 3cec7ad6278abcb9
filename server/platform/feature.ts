/**
 * A feature of the service: its slice of the contract, the HTTP handlers of that slice, and any
 * background work `svc serve` runs. The registry in `server/features.ts` lists them; the server and
 * the API loop over it. Its domain services, which the handlers, the CLI and MCP share, are listed
 * apart, in `server/feature-services.ts`, so administration loads them without any HTTP.
 */
import type { HttpApi } from "@effect/platform"
import { Layer } from "effect"

/** One feature; `http` serves `contract`'s groups. */
export interface Feature<
  Contract extends HttpApi.HttpApi.Any = HttpApi.HttpApi.Any,
  Http extends Layer.Layer.Any = Layer.Layer.Any,
  Workers extends Layer.Layer.Any = Layer.Layer<never>
> {
  readonly name: string
  readonly contract: Contract
  readonly http: Http
  readonly workers: Workers
}

/** Declares a feature, keeping the precise types of its parts. */
export const defineFeature = <
  Contract extends HttpApi.HttpApi.Any,
  Http extends Layer.Layer.Any,
  Workers extends Layer.Layer.Any = Layer.Layer<never>
>(feature: {
  readonly name: string
  readonly contract: Contract
  readonly http: Http
  readonly workers?: Workers
}): Feature<Contract, Http, Workers> => ({
  ...feature,
  workers: (feature.workers ?? Layer.empty) as Workers
})

/** What a union of layers provides, fails with and requires (each distributes over the union). */
type SuccessOf<L> = L extends Layer.Layer<infer A, infer _E, infer _R> ? A : never
type ErrorOf<L> = L extends Layer.Layer<infer _A, infer E, infer _R> ? E : never
type ContextOf<L> = L extends Layer.Layer<infer _A, infer _E, infer R> ? R : never

/** Merges a list of layers into one whose output, error and input are the unions of theirs. */
export const mergeLayers = <L extends Layer.Layer.Any>(layers: ReadonlyArray<L>): Layer.Layer<SuccessOf<L>, ErrorOf<L>, ContextOf<L>> =>
  (layers.length === 0 ? Layer.empty : Layer.mergeAll(...(layers as unknown as [Layer.Layer<never, any, any>, ...Array<Layer.Layer<never, any, any>>]))) as any
