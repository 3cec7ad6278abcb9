/**
 * The authoring family's runs of drafts (the runs feature): `run_draft` (a draft run of an Agent,
 * App or Flow, as the published run does), `run_test_cases` (draft runs of several cases, each
 * checked for text it must or must not contain) and `compare_models` (one message to an Agent's
 * draft under several models). Every run is an ordinary draft run: one execution and one credit.
 */
import { Effect, Either, Schema } from "effect"
import * as z from "zod/v4"
import type { Principal } from "../../identity/domain.js"
import { type ApiFailure, InvalidRequest } from "../../platform/errors.js"
import { envelopeBody, isApiFailure } from "../../platform/request/error-catalog.js"
import { agentIdOf, draftIdOf } from "../../builder/mcp-ids.js"
import { camelRunReply } from "../../mcp-door/output.js"
import { operationArgument } from "../../mcp-door/operation-arguments.js"
import { camelReply, idOrName, tool } from "../../mcp-door/tool.js"
import { RunService } from "../runs/service.js"
import { draftRunOperation, kindInput, kindReason, kindRefusal } from "./draft-kinds.js"
import { appTurn, agentTurn, flowRun, turnInput } from "./turns.js"

/** The draft a call names by id or exact name, once the caller may author its kind (gate, then scope). */
const draftNamed = (principal: Principal, kind: "agent" | "flow" | "app", idOrExactName: string) =>
  Effect.gen(function* () {
    const refusal = kindRefusal(principal, kind)
    if (refusal) return yield* refusal
    return yield* draftIdOf(principal, kind, idOrExactName)
  })

/** The most cases one `run_test_cases` call runs. */
export const maxTestCases = 20

const testCase = z.object({
  name: z.string().min(1).max(200).optional().describe("What the case checks (default: its position)."),
  message: turnInput.message.optional().describe("The message (Agents, Apps, Flows without questions)."),
  inputs: z.record(z.string(), z.unknown()).optional().describe("A Flow's answers keyed by parameter name."),
  expectContains: z.array(z.string().min(1)).max(20).optional().describe("Text the answer must contain (case-insensitive)."),
  expectNotContains: z.array(z.string().min(1)).max(20).optional().describe("Text the answer must not contain (case-insensitive).")
})

/** A run's failure in a report: the REST envelope's error. */
const RunError = Schema.Struct({ code: Schema.String, message: Schema.String })

/** What `run_test_cases` answers: how many cases passed and failed, and each case's outcome. */
const TestCasesReport = Schema.Struct({
  passed: Schema.Int,
  failed: Schema.Int,
  cases: Schema.Array(
    Schema.Union(
      Schema.Struct({ name: Schema.String, passed: Schema.Literal(false), error: RunError }),
      Schema.Struct({ name: Schema.String, passed: Schema.Boolean, answer: Schema.String, executionId: Schema.String, failures: Schema.Array(Schema.String) })
    )
  )
})

/** What `compare_models` answers: each model's reply (or failure), in the order given. */
const ModelsReport = Schema.Struct({
  agentId: Schema.String,
  results: Schema.Array(
    Schema.Union(Schema.Struct({ model: Schema.String, error: RunError }), Schema.Struct({ model: Schema.String, reply: Schema.String, executionId: Schema.String }))
  )
})

/** Why a report of several draft runs is the tool's own answer. */
const reportReason = "a report of several draft runs, which no REST operation answers"

/** What a failed case or model run answers: the REST envelope's error. */
const errorOf = (failure: unknown) =>
  isApiFailure(failure) ? envelopeBody(failure as ApiFailure).error : { code: "server_error", message: "The run failed on the server." }

/** The text an answer is judged on: an Agent's or App's reply, a Flow's output. */
const answerText = (answer: Record<string, unknown>): string => String(answer["reply"] ?? answer["output"] ?? "")

/** The expectations `text` misses, each named. */
const misses = (text: string, contains: ReadonlyArray<string>, notContains: ReadonlyArray<string>): Array<string> => {
  const lower = text.toLowerCase()
  return [
    ...contains.filter((wanted) => !lower.includes(wanted.toLowerCase())).map((wanted) => `does not contain "${wanted}"`),
    ...notContains.filter((unwanted) => lower.includes(unwanted.toLowerCase())).map((unwanted) => `contains "${unwanted}"`)
  ]
}

/** `run_test_cases`: each case is a draft run in a new conversation, in order; a case that fails to run is reported, the others still run. */
export const runTestCases = tool({
  name: "run_test_cases",
  title: "Run test cases against a draft",
  description: `Run up to ${maxTestCases} test cases against the draft of an Agent, App or Flow (each a draft run: one execution and one credit) and check each answer for text it must or must not contain. Answers {passed, failed, cases}.`,
  input: {
    kind: kindInput,
    id: z.string().min(1).describe("The item's id or exact name."),
    cases: z.array(testCase).min(1).max(maxTestCases)
  },
  operation: [draftRunOperation.agent, draftRunOperation.flow, draftRunOperation.app],
  output: { schema: TestCasesReport, because: reportReason },
  ownArguments: { kind: kindReason, id: idOrName, cases: "MCP's own: the draft runs to make and what each answer must or must not contain" },
  run: true,
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* draftNamed(principal, args.kind, args.id)
      const results: Array<Record<string, unknown>> = []
      for (const [index, one] of args.cases.entries()) {
        const name = one.name ?? `case ${index + 1}`
        const run: Effect.Effect<Record<string, unknown>, ApiFailure, any> =
          args.kind === "flow"
            ? flowRun(principal, id, { inputs: one.inputs, message: one.message }, true)
            : one.message === undefined
              ? Effect.fail(new InvalidRequest({ message: `cases[${index}].message: required to run an Agent or App.` }))
              : args.kind === "agent"
                ? agentTurn(principal, id, { message: one.message }, true)
                : appTurn(principal, id, { message: one.message }, true)
        const outcome = yield* Effect.either(run)
        if (Either.isLeft(outcome)) {
          results.push({ name, passed: false, error: errorOf(outcome.left) })
          continue
        }
        const text = answerText(outcome.right)
        const failures = misses(text, one.expectContains ?? [], one.expectNotContains ?? [])
        results.push({ name, passed: failures.length === 0, answer: text, executionId: outcome.right["executionId"], failures })
      }
      const passed = results.filter((result) => result.passed === true).length
      return { passed, failed: results.length - passed, cases: results }
    })
})

/** `compare_models`: one message to an Agent's draft under each model, in order (a new conversation each). */
export const compareModels = tool({
  name: "compare_models",
  title: "Compare models on an Agent's draft",
  description: "Send one message to the draft of an Agent under 2 to 5 models (`builtin` or models of the server's OpenAI-compatible endpoint), each a draft run (one execution and one credit); answers each model's reply side by side.",
  input: {
    agentId: z.string().min(1).describe("The Agent (id or exact name)."),
    message: turnInput.message,
    models: z.array(z.string().min(1).max(200)).min(2).max(5)
  },
  operation: draftRunOperation.agent,
  output: { schema: ModelsReport, because: reportReason },
  ownArguments: { agentId: idOrName, models: "MCP's own: the models to compare, 2 to 5, each a model name as an Agent's `model` is" },
  run: true,
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const runs = yield* RunService
      const id = yield* agentIdOf(principal, args.agentId, "drafts")
      const results: Array<Record<string, unknown>> = []
      for (const model of args.models) {
        const outcome = yield* Effect.either(
          Effect.gen(function* () {
            const prepared = yield* runs.prepareAgentTurn(principal as Principal, id, { message: args.message }, { draft: true })
            return camelReply(yield* runs.runAgentTurn({ ...prepared, definition: { ...prepared.definition, model } }))
          })
        )
        results.push(Either.isLeft(outcome) ? { model, error: errorOf(outcome.left) } : { model, reply: outcome.right["reply"], executionId: outcome.right["executionId"] })
      }
      return { agentId: id, results }
    })
})

const runDraft = tool({
  name: "run_draft",
  title: "Run a draft",
  description: "Run the draft of an Agent or App (`message`) or a Flow (`inputs`, or `message` without questions), as the published run does.",
  input: {
    kind: kindInput,
    id: z.string().min(1).describe("The item's id or exact name."),
    message: turnInput.message.optional(),
    conversationId: turnInput.conversationId,
    inputs: operationArgument(draftRunOperation.flow, "inputs").optional().describe("A Flow's answers keyed by parameter name.")
  },
  operation: [draftRunOperation.agent, draftRunOperation.flow, draftRunOperation.app],
  output: camelRunReply,
  ownArguments: { kind: kindReason, id: idOrName },
  run: true,
  handler: (args, { principal }) =>
    Effect.gen(function* () {
      const id = yield* draftNamed(principal, args.kind, args.id)
      if (args.kind === "flow") return yield* flowRun(principal, id, args, true)
      if (args.message === undefined) return yield* new InvalidRequest({ message: "message: required to run an Agent or App." })
      const turn = { message: args.message, conversationId: args.conversationId }
      return args.kind === "agent" ? yield* agentTurn(principal, id, turn, true) : yield* appTurn(principal, id, turn, true)
    })
})

/** The draft runs and checks of the authoring family (the runs feature): they are runs. */
export const draftRunTools = [runDraft, runTestCases, compareModels] as const
