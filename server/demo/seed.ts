/**
 * `svc serve --demo`: on the first start of an empty data directory, seeds a real demo through the
 * same services the API uses: a Knowledgebase of handbook pages and a price list PDF, a published
 * support Agent on it, a published lead-qualification Flow with typed questions, and a published
 * App (with a Transaction Service) combining them.
 */
import { Effect, Schema } from "effect"
import { CreateAgent } from "../builder/agents/domain.js"
import { AgentService } from "../builder/agents/service.js"
import { CreateApp, PatchAppDraft } from "../builder/apps/domain.js"
import { AppService } from "../builder/apps/service.js"
import { FlowService } from "../builder/flows/service.js"
import { PageService } from "../knowledge/pages/service.js"
import { KnowledgebaseService } from "../knowledge/service.js"
import { SourceService } from "../knowledge/sources/service.js"
import { AccountsService, defaultOrganization } from "../identity/service.js"
import { ServerSettings } from "../platform/settings-repo.js"
import { readDemoContent } from "./content.js"

/** What the demo created, by id. */
export interface DemoIds {
  readonly knowledgebaseId: string
  readonly agentId: string
  readonly flowId: string
  readonly appId: string
}

/** Seeds the demo as the holder of `secret` (the bootstrap key); fails loudly on any refusal. */
export const seedDemo = (secret: string) =>
  Effect.gen(function* () {
    const actor = yield* (yield* AccountsService).authenticate(secret)
    const knowledgebases = yield* KnowledgebaseService
    const pages = yield* PageService
    const sources = yield* SourceService
    const agents = yield* AgentService
    const flows = yield* FlowService
    const apps = yield* AppService
    const content = readDemoContent()

    const kb = yield* knowledgebases.create(actor, {
      name: "Northwind handbook",
      description: "What Northwind's support team answers from: refunds, shipping, warranty and billing."
    })
    for (const page of content.pages) yield* pages.create(actor, kb.id, { title: page.title, bodyMarkdown: page.markdown })
    const upload = yield* sources.prepare(actor, kb.id, {
      name: content.pdf.name,
      parentPageId: null,
      content: { kind: "file", type: "pdf", bytes: content.pdf.bytes, contentType: "application/pdf" },
      createdVia: "api"
    })
    yield* sources.write(actor, upload)
    yield* sources.wakeWorker

    const agent = yield* agents.create(actor, yield* Schema.decodeUnknown(CreateAgent)({ ...content.agent, knowledgebaseIds: [kb.id] }))
    yield* agents.publish(actor, agent.id)

    const flowSteps = (content.flow.steps as ReadonlyArray<Record<string, unknown>>).map((step) =>
      step.type === "search" ? { ...step, knowledgebaseIds: [kb.id] } : step
    )
    const flow = yield* flows.create(actor, { ...content.flow, steps: flowSteps })
    yield* flows.publish(actor, flow.id)

    const { api, ...appFields } = content.app
    const app = yield* apps.create(actor, yield* Schema.decodeUnknown(CreateApp)({ ...appFields, agentIds: [agent.id], flowIds: [flow.id] }))
    yield* apps.updateDraft(actor, app.id, yield* Schema.decodeUnknown(PatchAppDraft)({ api }))
    yield* apps.publish(actor, app.id)
    return { knowledgebaseId: kb.id, agentId: agent.id, flowId: flow.id, appId: app.id } satisfies DemoIds
  }).pipe(Effect.withLogSpan("demo"))

/** The setting that records the demo's ids once it is seeded (`svc serve --demo` seeds a data directory once). */
const demoSetting = "demo_ids"

/** What `svc serve --demo` reports: the demo's ids, and whether this start seeded it or found it. */
export interface DemoReport extends DemoIds {
  readonly created: boolean
}

/**
 * `svc serve --demo` on any data directory: seeds the demo into organization `default` unless it
 * was seeded before (then reports the recorded ids). On the first start it acts as the bootstrap
 * key; on a later start through a key made for it (`demo`, every scope) and revoked once the demo
 * is in, so the keys list shows who wrote it.
 */
export const seedDemoOnce = (bootstrapSecret: string | null) =>
  Effect.gen(function* () {
    const accounts = yield* AccountsService
    const settings = yield* ServerSettings
    const recorded = yield* settings.setting(demoSetting)
    if (recorded !== null) return { ...(JSON.parse(recorded) as DemoIds), created: false } satisfies DemoReport
    const made = bootstrapSecret === null ? yield* accounts.createKey(defaultOrganization.slug, { name: "demo", scopes: "all" }) : null
    const ids = yield* seedDemo(bootstrapSecret ?? (made!.secret as string))
    if (made !== null) yield* accounts.revokeKey(defaultOrganization.slug, made.key.id)
    yield* settings.putSettingIfAbsent(demoSetting, JSON.stringify(ids))
    return { ...ids, created: true } satisfies DemoReport
  })
