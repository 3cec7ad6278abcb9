/**
 * A feature of the service: its slice of the contract, the HTTP handlers of that slice, and any
 * background work `svc serve` runs. The registry in `server/features.ts` lists them; the server and
 * the API loop over it. Its domain services, which the handlers, the CLI and MCP share, are listed
 * apart, in `server/feature-services.ts`, so administration loads them without any HTTP.
 */
import type { HttpApi } from "@effect/platform"
import { Effect, Layer } from "effect"
import type { FastOperation } from "./http/fast-lane.js"

/** The endpoints a feature's fast lane serves (`http/fast-lane.ts`), built from its services. */
export type FastLaneOf = Effect.Effect<ReadonlyArray<FastOperation>, never, any>

/** One feature; `http` serves `contract`'s groups. */
export interface Feature<
  Contract extends HttpApi.HttpApi.Any = HttpApi.HttpApi.Any,
  Http extends Layer.Layer.Any = Layer.Layer.Any,
  Workers extends Layer.Layer.Any = Layer.Layer<never>,
  FastLane extends FastLaneOf = Effect.Effect<ReadonlyArray<FastOperation>>
> {
  readonly name: string
  readonly contract: Contract
  readonly http: Http
  readonly workers: Workers
  /** The feature's hot writes that the fast lane serves; none when absent. */
  readonly fastLane: FastLane
}

/** Declares a feature, keeping the precise types of its parts. */
export const defineFeature = <
  Contract extends HttpApi.HttpApi.Any,
  Http extends Layer.Layer.Any,
  Workers extends Layer.Layer.Any = Layer.Layer<never>,
  FastLane extends FastLaneOf = Effect.Effect<ReadonlyArray<FastOperation>>
>(feature: {
  readonly name: string
  readonly contract: Contract
  readonly http: Http
  readonly workers?: Workers
  readonly fastLane?: FastLane
}): Feature<Contract, Http, Workers, FastLane> => ({
  ...feature,
  workers: (feature.workers ?? Layer.empty) as Workers,
  fastLane: feature.fastLane ?? (Effect.succeed([]) as unknown as FastLane)
})

/** What a union of layers provides, fails with and requires (each distributes over the union). */
type SuccessOf<L> = L extends Layer.Layer<infer A, infer _E, infer _R> ? A : never
type ErrorOf<L> = L extends Layer.Layer<infer _A, infer E, infer _R> ? E : never
type ContextOf<L> = L extends Layer.Layer<infer _A, infer _E, infer R> ? R : never

/** Merges a list of layers into one whose output, error and input are the unions of theirs. */
export const mergeLayers = <L extends Layer.Layer.Any>(layers: ReadonlyArray<L>): Layer.Layer<SuccessOf<L>, ErrorOf<L>, ContextOf<L>> =>
  (layers.length === 0 ? Layer.empty : Layer.mergeAll(...(layers as unknown as [Layer.Layer<never, any, any>, ...Array<Layer.Layer<never, any, any>>]))) as any
