/**
 * What a signed-in end user does at a Portal: the Apps they may run there (`AccessService.appsFor`
 * at this Portal, published Apps only) and conversation turns with one of them, run by
 * `AppRunService` as the Portal and charged to the person's subscription credit pools. A
 * conversation belongs to the person who started it at this Portal; anyone else's id is refused as
 * not found. Knows nothing of HTTP.
 */
import { Effect } from "effect"
import type { ApiScope, Principal } from "../identity/domain.js"
import { AccountsRepo } from "../identity/repo.js"
import { AppClock, isoAt } from "../platform/clock.js"
import { type InsufficientCredits, NotFound, type RunCancelled, type RunFailed } from "../platform/errors.js"
import { AccessService } from "../provisioning/access/service.js"
import type { AppConversationReply } from "../runtime/app-runs/domain.js"
import { AppRunService, type PreparedAppTurn } from "../runtime/app-runs/service.js"
import type { RunSink } from "../runtime/runs/events.js"
import { type PortalAppRow, PortalSignInRepo } from "./repo.js"
import type { SignedIn } from "./service.js"

const portalScopes: ReadonlySet<ApiScope> = new Set<ApiScope>(["apps:execute"])

/** A chat message as the Portal shows it. */
export interface ChatMessage {
  readonly role: "user" | "assistant"
  readonly text: string
}

/** The Apps of a signed-in end user and their conversations. */
export class PortalChat extends Effect.Service<PortalChat>()("svc/PortalChat", {
  effect: Effect.gen(function* () {
    const repo = yield* PortalSignInRepo
    const access = yield* AccessService
    const accounts = yield* AccountsRepo
    const appRuns = yield* AppRunService
    const clock = yield* AppClock

    /** The Portal acting for the end user: its organization, a key that is no API key, `apps:execute` only. */
    const actorFor = (signedIn: SignedIn) =>
      Effect.gen(function* () {
        const organization = yield* accounts.organizationById(signedIn.portal.organization_id)
        if (organization === null) return yield* new NotFound({ message: "This Portal's organization no longer exists." })
        const principal: Principal = {
          organization,
          key: {
            id: `portal:${signedIn.portal.id}`,
            organizationId: organization.id,
            kind: "organization",
            memberId: null,
            name: `Portal ${signedIn.portal.name} (end user ${signedIn.endUser.id})`,
            prefix: "portal",
            scopes: [...portalScopes],
            createdAt: organization.createdAt,
            lastUsedAt: null,
            revokedAt: null
          },
          member: null,
          scopes: portalScopes
        }
        return principal
      })

    const apps = (signedIn: SignedIn): Effect.Effect<ReadonlyArray<PortalAppRow>> =>
      Effect.flatMap(
        access.appsFor({ organizationId: signedIn.portal.organization_id, endUserId: signedIn.endUser.id, portalId: signedIn.portal.id }),
        (ids) => repo.publishedApps(signedIn.portal.organization_id, ids)
      )

    const notFound = (appId: string) => new NotFound({ message: `No App '${appId}' is available to you here.` })

    return {
      /** The published Apps the end user may run at this Portal, by name. */
      apps,

      /** One of those Apps, or `not_found`. */
      app: (signedIn: SignedIn, appId: string): Effect.Effect<PortalAppRow, NotFound> =>
        Effect.flatMap(apps(signedIn), (list) => {
          const found = list.find((app) => app.id === appId)
          return found === undefined ? Effect.fail(notFound(appId)) : Effect.succeed(found)
        }),

      /** The messages of a conversation the end user holds here (else `not_found`). */
      messages: (signedIn: SignedIn, conversationId: string): Effect.Effect<ReadonlyArray<ChatMessage>, NotFound> =>
        Effect.flatMap(repo.holds(conversationId, signedIn.portal.id, signedIn.endUser.id), (held) =>
          held ? repo.messages(conversationId) : Effect.fail(new NotFound({ message: "No such conversation of yours here." }))
        ),

      /**
       * The checks of a turn (the App available here, the conversation the person's own, a member
       * to answer, a credit left in the person's pools); nothing is written.
       */
      prepare: (
        signedIn: SignedIn,
        appId: string,
        message: string,
        conversationId: string | null
      ): Effect.Effect<PreparedAppTurn, NotFound | InsufficientCredits | RunFailed> =>
        Effect.gen(function* () {
          const available = yield* apps(signedIn)
          if (!available.some((app) => app.id === appId)) return yield* notFound(appId)
          if (conversationId !== null && !(yield* repo.holds(conversationId, signedIn.portal.id, signedIn.endUser.id))) {
            return yield* new NotFound({ message: "No such conversation of yours here." })
          }
          const actor = yield* actorFor(signedIn)
          return yield* appRuns.prepareTurn(
            actor,
            appId,
            { message, ...(conversationId === null ? {} : { conversation_id: conversationId }) },
            { draft: false, credit: { kind: "subscription", endUserId: signedIn.endUser.id } }
          )
        }),

      /** Runs a prepared turn; a new conversation is recorded as the person's as soon as it starts. */
      run: (
        signedIn: SignedIn,
        turn: PreparedAppTurn,
        onEvent: RunSink = () => Effect.void
      ): Effect.Effect<AppConversationReply, RunFailed | RunCancelled | InsufficientCredits> =>
        appRuns.runTurn(turn, (event) =>
          event.type === "start" && event.conversation_id !== undefined && turn.conversationId === null
            ? Effect.zipRight(repo.holdConversation(event.conversation_id, signedIn.portal.id, signedIn.endUser.id, isoAt(clock.now())), onEvent(event))
            : onEvent(event)
        )
    }
  }),
  dependencies: [PortalSignInRepo.Default, AccessService.Default, AccountsRepo.Default, AppRunService.Default]
}) {}
