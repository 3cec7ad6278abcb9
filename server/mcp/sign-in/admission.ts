/**
 * The OAuth endpoints' door to the one admission pipeline (`identity/admission.ts`). Every client
 * is public (no secret), so a request counts against the address it came from
 * (`credentialKinds.oauthClient`), whatever client it names. A request that names a client
 * (`/oauth/authorize`, `/oauth/token`) is authenticated by that client being registered, and at
 * the authorization page authorized by its redirect URI being one the client registered; a refusal
 * there is answered by the endpoint as before and counted by no one. Registration and revocation
 * name no client that must exist: they are admitted as their address and counted. A client named
 * by its metadata document (a URL `client_id`) is counted first, then its document fetched (or
 * taken from the cache) and its redirect URI checked: the fetch is work an address makes the
 * server do, so it is never free.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { admissionPipeline, credentialKinds } from "../../identity/admission.js"
import type { OAuthClient } from "../../identity/mcp-sign-in/domain.js"
import type { RateLimited } from "../../platform/errors.js"
import { isClientIdUrl } from "../../identity/mcp-sign-in/client-metadata.js"
import { type AuthorizingClient, McpApproval } from "./approval.js"
import type { ClientDocumentRefused } from "./client-documents.js"

/** The address a request came from (the socket's peer; a proxy's forwarded address is not trusted). */
export const clientAddress = (request: HttpServerRequest.HttpServerRequest): string => Option.getOrElse(request.remoteAddress, () => "unknown")

/** A request admitted as a registered client, from its address. */
export interface AdmittedClient {
  readonly client: OAuthClient
  readonly address: string
}

/** An authorization request admitted: its client (registered, or described by its metadata document) and address. */
export interface AdmittedAuthorizing {
  readonly found: AuthorizingClient
  readonly address: string
}

/** How an authorization request is refused before it is served. */
export interface AuthorizingRefusals<Refusal> {
  /** No client is registered with the id. */
  readonly unknown: Refusal
  /** The metadata document a URL id names cannot be used. */
  readonly document: (refused: ClientDocumentRefused) => Refusal
  /** The request's refusal for its client (its redirect URI), or null. */
  readonly authorize: (client: OAuthClient) => Refusal | null
}

/** The OAuth endpoints' admissions. */
export interface OAuthAdmission {
  /** Admits a request that names no client that must exist (registration, revocation): counted per address. */
  readonly anonymous: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<string, RateLimited>
  /**
   * Admits a request of the client `clientId`: `unknown` when no such client is registered, else
   * `authorize`'s refusal, else counted per address.
   */
  readonly client: <Refusal>(
    request: HttpServerRequest.HttpServerRequest,
    clientId: string,
    unknown: Refusal,
    authorize?: ((client: OAuthClient) => Refusal | null) | undefined
  ) => Effect.Effect<AdmittedClient, Refusal | RateLimited>
  /**
   * Admits an authorization request of `clientId`: a registered client as `client` does; a URL id
   * counted first, then refused when its document cannot be used or by `authorize`.
   */
  readonly authorizing: <Refusal>(
    request: HttpServerRequest.HttpServerRequest,
    clientId: string,
    refusals: AuthorizingRefusals<Refusal>
  ) => Effect.Effect<AdmittedAuthorizing, Refusal | RateLimited>
}

const countAs = (who: { readonly address: string }) => credentialKinds.oauthClient.countAs(who.address)

/** The OAuth endpoints' admissions, their services resolved once. */
export const makeOAuthAdmission: Effect.Effect<OAuthAdmission, never, McpApproval | Effect.Effect.Context<typeof admissionPipeline>> = Effect.gen(function* () {
  const approval = yield* McpApproval
  const admit = yield* admissionPipeline
  const anonymous = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.map(admit({ authenticate: Effect.succeed({ address: clientAddress(request) }), authorize: () => null, countAs }), (who) => who.address)
  return {
    anonymous,
    authorizing: <Refusal>(request: HttpServerRequest.HttpServerRequest, clientId: string, refusals: AuthorizingRefusals<Refusal>) =>
      isClientIdUrl(clientId)
        ? Effect.gen(function* () {
            const address = yield* anonymous(request)
            const found = yield* Effect.mapError(approval.authorizingClient(clientId), refusals.document)
            if (found === null) return yield* Effect.fail(refusals.unknown)
            const refusal = refusals.authorize(found.client)
            return refusal === null ? { found, address } : yield* Effect.fail(refusal)
          })
        : admit<AdmittedAuthorizing, Refusal>({
            authenticate: Effect.flatMap(clientId === "" ? Effect.succeed(null) : Effect.orDie(approval.authorizingClient(clientId)), (found) =>
              found === null ? Effect.fail(refusals.unknown) : Effect.succeed<AdmittedAuthorizing>({ found, address: clientAddress(request) })
            ),
            authorize: (who) => refusals.authorize(who.found.client),
            countAs
          }),
    client: <Refusal>(request: HttpServerRequest.HttpServerRequest, clientId: string, unknown: Refusal, authorize?: ((client: OAuthClient) => Refusal | null) | undefined) =>
      admit<AdmittedClient, Refusal>({
        authenticate: Effect.flatMap(clientId === "" ? Effect.succeed(null) : approval.client(clientId), (client) =>
          client === null ? Effect.fail(unknown) : Effect.succeed<AdmittedClient>({ client, address: clientAddress(request) })
        ),
        authorize: (who) => authorize?.(who.client) ?? null,
        countAs
      })
  }
})
