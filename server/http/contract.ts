/**
 * The contract's frame: the API's identifier, its root and the failures every endpoint may answer,
 * and each feature's slice of it. A feature builds its handlers against its own slice, so no
 * feature imports the whole API; `server/api.ts` joins the slices into the one `HttpApi` that
 * serves, documents and generates the SDK.
 */
import { HttpApi, type HttpApiGroup } from "@effect/platform"
import type { Schema } from "effect"
import { apiPrefix } from "../platform/api-root.js"
import { ErrorResponse } from "./error-responses.js"

/** The annotation of a success answered only when the request asks for it (`answeredOnRequest`). */
export const AnsweredOnRequest: unique symbol = Symbol.for("svc/AnsweredOnRequest")

/**
 * A success answered only when the request asks for it, such as the 202 of a run started with
 * `detach: true`: MCP tools, which never ask for it, leave it out of their output schemas.
 */
export const answeredOnRequest = <S extends Schema.Schema.Any>(schema: S): S => schema.annotations({ [AnsweredOnRequest]: true }) as S

/** The API's identifier; every slice and the joined API share it. */
export const apiId = "svc" as const

/** The API root, `{base_url}` without the host (defined in `platform/api-root.ts`). */
export { apiPrefix }

/** The API with the failures any endpoint may answer (bad input, a body too large, a fault). */
const frame = () =>
  HttpApi.make(apiId)
    .addError(ErrorResponse.InvalidRequest)
    .addError(ErrorResponse.PayloadTooLarge)
    .addError(ErrorResponse.ServerError)

/** The contract frame with no endpoints. */
export type ContractFrame = ReturnType<typeof frame>

/** A slice of the contract holding `Groups`. */
export type ContractOf<Groups extends HttpApiGroup.HttpApiGroup.Any> =
  ContractFrame extends HttpApi.HttpApi<infer Id, never, infer E, infer R> ? HttpApi.HttpApi<Id, Groups, E, R> : never

/** A feature's slice of the contract: its endpoint groups under the API root. */
export const featureContract = <const Groups extends ReadonlyArray<HttpApiGroup.HttpApiGroup.Any>>(
  ...groups: Groups
): ContractOf<Groups[number]> =>
  (groups.reduce((api: any, group) => api.add(group), frame()) as any).prefix(apiPrefix)

/** The whole contract: every slice joined, with the API-level annotations still to add. */
export const joinContracts = <const Contracts extends ReadonlyArray<HttpApi.HttpApi.Any>>(
  contracts: Contracts
): ContractOf<Contracts[number] extends HttpApi.HttpApi<any, infer Groups, any, any> ? Groups : never> =>
  contracts.reduce((api: any, contract) => api.addHttpApi(contract), frame())
