/**
 * The Portal's door to the one admission pipeline (`identity/admission.ts`): a request that needs a
 * signed-in person is authenticated by its session cookie (a live session of an `active` end user
 * at this Portal), needs no further authorization here (which Apps the person may use is answered
 * per App by `AccessService`, as not found, like a REST 404 after admission), and is counted once
 * against its end user's rate (`credentialKinds.portalSession`). A request without a live session
 * is refused and counted by no one. The email and code steps of sign-in are anonymous: they do not
 * come here (codes are capped per person and Portal instead, `identity/sign-in/codes.ts`).
 */
import { Data, Effect } from "effect"
import { admissionPipeline, credentialKinds } from "../identity/admission.js"
import type { RateLimited } from "../platform/errors.js"
import type { PortalRow } from "./repo.js"
import { PortalSignIn, type SignedIn } from "./service.js"

/** The refusal of a request that needs a signed-in person: no session cookie, or one that no longer signs anyone in. */
export class PortalSignedOut extends Data.TaggedError("PortalSignedOut")<{ readonly hadSession: boolean }> {}

/** Admits a request at `portal` by its session cookie's token: the person, counted once; else the refusal or `rate_limited`. */
export type PortalAdmission = (portal: PortalRow, sessionToken: string | undefined) => Effect.Effect<SignedIn, PortalSignedOut | RateLimited>

/** The Portal's admission, its services resolved once. */
export const makePortalAdmission: Effect.Effect<PortalAdmission, never, PortalSignIn | Effect.Effect.Context<typeof admissionPipeline>> = Effect.gen(
  function* () {
    const signIn = yield* PortalSignIn
    const admit = yield* admissionPipeline
    const countAs = (signedIn: SignedIn) => credentialKinds.portalSession.countAs(signedIn.endUser.id)
    return (portal, sessionToken) =>
      admit({
        authenticate: Effect.flatMap(signIn.session(portal, sessionToken), (signedIn) =>
          signedIn === null ? Effect.fail(new PortalSignedOut({ hadSession: sessionToken !== undefined })) : Effect.succeed(signedIn)
        ),
        authorize: () => null,
        countAs,
        organizationOf: () => portal.organization_id
      })
  }
)
