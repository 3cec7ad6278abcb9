/** What a Flow run starts from: a run body checked against the Flow (its inputs, or a message for a Flow without questions). */
import { Either } from "effect"
import { type CheckedFlow, conversationMessageVariable } from "../../builder/flows/definition.js"
import { validateFlowInputs } from "../../builder/flows/inputs.js"
import type { TemplateValue } from "../../builder/flows/templates.js"
import { maxMessageChars } from "../runs/domain.js"
import type { FlowRunRequest } from "./domain.js"

const isEmptyObject = (value: unknown) => typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0

/** Every problem of a run body for `flow`, or the values its steps start from. */
export const runInputs = (flow: CheckedFlow, body: FlowRunRequest): Either.Either<Readonly<Record<string, TemplateValue>>, ReadonlyArray<string>> => {
  if (flow.conversational) {
    const problems: Array<string> = []
    if (body.inputs !== undefined && !isEmptyObject(body.inputs)) problems.push("inputs: this Flow has no questions; send message (and conversation_id)")
    if (body.message === undefined) problems.push("message: missing; this Flow has no questions and runs on a message")
    else if (body.message.length < 1 || body.message.length > maxMessageChars) problems.push(`message: must be 1 to ${maxMessageChars} characters`)
    return problems.length > 0 ? Either.left(problems) : Either.right({ [conversationMessageVariable]: body.message! })
  }
  const problems: Array<string> = []
  if (body.message !== undefined) problems.push("message: this Flow asks questions; send its answers as inputs")
  if (body.conversation_id !== undefined) problems.push("conversation_id: only a Flow without questions keeps a conversation")
  const validated = validateFlowInputs(flow, body.inputs)
  if (Either.isLeft(validated)) problems.push(...validated.left)
  return problems.length > 0 || Either.isLeft(validated) ? Either.left(problems) : Either.right(validated.right)
}
