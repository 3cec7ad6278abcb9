/**
 * Objects of every kind in one organization, made through the API: a Knowledgebase with a folder,
 * a page, a source and a pending review, a published Agent, Flow and App, a conversation and its
 * execution, end users with a subscription, a group with a member and a grant (per-user grants are
 * refused to organizations with groups), and a Portal admission. The ids are kept by kind (`SeededIds`).
 */
import type { Child } from "../children.js"
import type { SoakClient } from "./http.js"
import type { SoakOrganization, SoakReady } from "./protocol.js"
import { setReview } from "./server.js"

/** The ids of one organization's objects, by kind. */
export interface SeededIds {
  readonly knowledgebase: string
  readonly folder: string
  readonly page: string
  readonly source: string
  readonly review: string
  readonly agent: string
  readonly flow: string
  readonly app: string
  readonly conversation: string
  readonly execution: string
  readonly endUser: string
  readonly subscription: string
  readonly group: string
  readonly groupMember: string
  readonly groupGrant: string
  readonly portal: string
  readonly tierPlan: string
}

/** Seeds one organization through `client` with its organization key; `tag` makes the emails of a second seeding new, `previous` lends its Knowledgebase at the plan's cap. */
export const seedOrganization = async (client: SoakClient, server: Child<SoakReady>, org: SoakOrganization, tag = "", previous?: SeededIds): Promise<SeededIds> => {
  const call = (method: string, path: string, body?: unknown) => client.must(org.orgKey, method, path, body)
  const created = await client.must(org.orgKey, "POST", "/knowledgebases", { name: `${org.slug} handbook`, description: "Seeded." }, [201, 403])
  // at the plan's cap (the fuzz makes many), the previous seeding's Knowledgebase is used again
  const knowledgebase: string = created.knowledgebase?.id ?? previous?.knowledgebase
  if (!knowledgebase) throw new Error(`POST /knowledgebases: ${JSON.stringify(created)}`)
  const kb = `/knowledgebases/${knowledgebase}`
  const folder = (await call("POST", `${kb}/pages`, { title: "Policies", templateKey: "folder" })).page.id
  const page = (await call("POST", `${kb}/pages`, { title: "Refunds", bodyMarkdown: `# Refunds\n\n${org.slug} refunds within 30 days.`, parentPageId: folder })).page.id
  const source = (await call("POST", `${kb}/sources`, { name: "Expenses", contentText: `${org.slug} keeps receipts for seven years.` })).source.id
  await setReview(server, org.slug, true)
  let review: string
  try {
    const pending = await call("PATCH", `${kb}/pages/${page}`, { description: "Waiting for a person." })
    review = String(pending.reviewPath).split("/").pop()!
  } finally {
    await setReview(server, org.slug, false)
  }
  const agent = (await call("POST", "/agents", { name: `${org.slug} helper`, knowledgebaseIds: [knowledgebase] })).agent.id
  await call("POST", `/agents/${agent}/publish`)
  const flow = (
    await call("POST", "/flows", {
      name: `${org.slug} quote`,
      questions: [{ label: "Company name", type: "text", required: true }],
      steps: [{ type: "template", name: "greeting", template: "Hello {{company_name}}" }],
      output: "{{greeting}}"
    })
  ).flow.id
  await call("POST", `/flows/${flow}/publish`)
  const app = (await call("POST", "/apps", { name: `${org.slug} desk`, greeting: "Hi", agentIds: [agent] })).app.id
  await call("POST", `/apps/${app}/publish`)
  const turn = await call("POST", `/agents/${agent}/conversation`, { message: "refunds" })
  const endUserBody = { email: `person${tag}@${org.slug}.test`, fullName: "Person", tierPlanIds: [org.tierPlanId] }
  const provisioned = await call("POST", "/end-users", endUserBody)
  const endUser = provisioned.endUser.id
  const subscription = provisioned.subscriptions[0].id
  const group = (await call("POST", "/user-groups", { name: `${org.slug} group` })).group.id
  const member = (await call("POST", "/end-users", { email: `member${tag}@${org.slug}.test` })).endUser.id
  await call("POST", `/user-groups/${group}/members`, { endUserId: member })
  const groupGrant = (await call("POST", `/user-groups/${group}/grants`, { targetKind: "app", targetId: app })).grantId
  await call("POST", `/portals/${org.portalId}/admissions`, { groupId: group })
  return {
    knowledgebase,
    folder,
    page,
    source,
    review,
    agent,
    flow,
    app,
    conversation: turn.conversation_id,
    execution: turn.executionId,
    endUser,
    subscription,
    group,
    groupMember: member,
    groupGrant,
    portal: org.portalId,
    tierPlan: org.tierPlanId
  }
}
