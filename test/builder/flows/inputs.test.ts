import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { type CheckedFlow, checkFlowDefinition } from "../../../server/builder/flows/definition.js"
import {
  flowInputs,
  flowInputsSchema,
  inputsAjv,
  inputsValidator,
  jsonSchemaDialect,
  maxCachedValidators,
  validateFlowInputs
} from "../../../server/builder/flows/inputs.js"

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

const checked = (body: unknown): CheckedFlow => {
  const result = checkFlowDefinition(body)
  if (Either.isLeft(result)) throw new Error(result.left.problems.join("\n"))
  return result.right
}

/** One question of every type; `required` as given. */
const everyType = (required: boolean): CheckedFlow =>
  checked({
    name: "Every type",
    questions: [
      { label: "Company name", type: "text", required, description: "Legal name" },
      { label: "Notes", type: "long_text", required },
      { label: "Seats", type: "number", required },
      { label: "Trial?", type: "boolean", required },
      { label: "Plan", type: "select", options: ["Basic", "Pro"], required },
      { label: "Channels", type: "multi_select", options: ["email", "phone", "chat"], required },
      { label: "Work email", type: "email", required },
      { label: "Website", type: "url", required },
      { label: "Start date", type: "date", required }
    ],
    steps: [{ type: "template", name: "out", template: "{{company_name}}" }]
  })

const valid = {
  company_name: "Acme",
  notes: "Long\ntext",
  seats: 12,
  trial: true,
  plan: "Pro",
  channels: ["email", "chat"],
  work_email: "ann@example.com",
  website: "https://acme.example/about",
  start_date: "2026-12-01"
}

const problemsOf = (flow: CheckedFlow, inputs: unknown): ReadonlyArray<string> => {
  const result = validateFlowInputs(flow, inputs)
  if (Either.isRight(result)) throw new Error(`expected problems for ${JSON.stringify(inputs)}`)
  return result.left
}

describe("flowInputs", () => {
  it("lists each question under its parameter name, options and description only where given", () => {
    expect(flowInputs(everyType(true)).slice(0, 6)).toEqual([
      { name: "company_name", label: "Company name", type: "text", required: true, description: "Legal name" },
      { name: "notes", label: "Notes", type: "long_text", required: true },
      { name: "seats", label: "Seats", type: "number", required: true },
      { name: "trial", label: "Trial?", type: "boolean", required: true },
      { name: "plan", label: "Plan", type: "select", options: ["Basic", "Pro"], required: true },
      { name: "channels", label: "Channels", type: "multi_select", options: ["email", "phone", "chat"], required: true }
    ])
  })
})

describe("flowInputsSchema", () => {
  it("is the exact JSON Schema of the inputs", () => {
    expect(flowInputsSchema(everyType(true))).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        company_name: { title: "Company name", description: "Legal name", type: "string", minLength: 1 },
        notes: { title: "Notes", type: "string", minLength: 1 },
        seats: { title: "Seats", type: "number" },
        trial: { title: "Trial?", type: "boolean" },
        plan: { title: "Plan", enum: ["Basic", "Pro"] },
        channels: { title: "Channels", type: "array", items: { enum: ["email", "phone", "chat"] }, uniqueItems: true, minItems: 1 },
        work_email: { title: "Work email", type: "string", format: "email" },
        website: { title: "Website", type: "string", format: "uri", pattern: "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]+" },
        start_date: { title: "Start date", type: "string", format: "date" }
      },
      required: ["company_name", "notes", "seats", "trial", "plan", "channels", "work_email", "website", "start_date"],
      additionalProperties: false
    })
  })

  it("requires nothing and allows empty text and no choices when no question is required", () => {
    const schema = flowInputsSchema(everyType(false)) as { required: unknown; properties: Record<string, unknown> }
    expect(schema.required).toEqual([])
    expect(schema.properties.company_name).toEqual({ title: "Company name", description: "Legal name", type: "string" })
    expect(schema.properties.channels).toEqual({ title: "Channels", type: "array", items: { enum: ["email", "phone", "chat"] }, uniqueItems: true })
  })

  it("is valid draft 2020-12 by Ajv's meta-schema", () => {
    const ajv = new Ajv2020({ strict: true })
    for (const flow of [everyType(true), everyType(false), checked({ name: "Chat", questions: [], steps: [{ type: "template", name: "a", template: "{{message}}" }] })]) {
      const schema = flowInputsSchema(flow)
      expect(schema.$schema).toBe(jsonSchemaDialect)
      expect(ajv.validateSchema(schema), ajv.errorsText()).toBe(true)
    }
    expect(ajv.validateSchema({ $schema: jsonSchemaDialect, type: "object", required: "seats" })).toBe(false)
  })

  it("takes no inputs for a Flow without questions", () => {
    const chat = checked({ name: "Chat", questions: [], steps: [{ type: "template", name: "a", template: "{{message}}" }] })
    expect(flowInputs(chat)).toEqual([])
    expect(flowInputsSchema(chat)).toEqual({ $schema: jsonSchemaDialect, type: "object", properties: {}, required: [], additionalProperties: false })
    expect(validateFlowInputs(chat, undefined)).toEqual(Either.right({}))
    expect(validateFlowInputs(chat, {})).toEqual(Either.right({}))
    expect(problemsOf(chat, { message: "hi" })).toEqual(["inputs.message: unknown input; this Flow takes no inputs"])
  })
})

/** Per parameter: values its question accepts and refuses (when required). */
const cases: Record<string, { accepts: ReadonlyArray<unknown>; refuses: ReadonlyArray<unknown> }> = {
  company_name: { accepts: ["Acme", " x "], refuses: ["", 5, null, ["Acme"], { name: "Acme" }] },
  notes: { accepts: ["a\nb"], refuses: ["", false] },
  seats: { accepts: [0, -3, 12.5, 1e6], refuses: ["12", null, true, [1]] },
  trial: { accepts: [true, false], refuses: ["true", 1, 0, null] },
  plan: { accepts: ["Basic", "Pro"], refuses: ["pro", "Gold", "", 1, ["Pro"], null] },
  channels: { accepts: [["email"], ["chat", "phone", "email"]], refuses: [[], ["fax"], ["email", "email"], "email", [1], null] },
  work_email: { accepts: ["ann@example.com", "a.b+c@sub.example.org"], refuses: ["not-an-email", "", "ann@", 7] },
  website: { accepts: ["https://acme.example", "http://localhost:8080/x?y=1", "HTTPS://ACME.EXAMPLE"], refuses: ["acme.example", "mailto:ann@example.com", "ftp://acme.example", "https://", "", 1] },
  start_date: { accepts: ["2026-12-01", "2024-02-29"], refuses: ["2026-02-30", "2026-13-01", "01/12/2026", "2026-12-01T10:00:00Z", "", 20261201] }
}

describe("validateFlowInputs: every question type", () => {
  const flow = everyType(true)

  it("accepts a complete valid set and gives the values", () => {
    expect(validateFlowInputs(flow, valid)).toEqual(Either.right(valid))
  })

  for (const [name, { accepts, refuses }] of Object.entries(cases)) {
    it.each(accepts.map((value) => [JSON.stringify(value)] as const))(`${name} accepts %s`, (shown) => {
      expect(Either.isRight(validateFlowInputs(flow, { ...valid, [name]: JSON.parse(shown) }))).toBe(true)
    })
    it.each(refuses.map((value) => [JSON.stringify(value)] as const))(`${name} refuses %s, naming it`, (shown) => {
      const found = problemsOf(flow, { ...valid, [name]: JSON.parse(shown) })
      expect(found).toHaveLength(1)
      expect(found[0]).toMatch(new RegExp(`^inputs\\.${name}(\\[\\d+\\])?: `))
    })
  }

  it("allows leaving out optional inputs and empty optional text or choices", () => {
    const optional = everyType(false)
    expect(validateFlowInputs(optional, {})).toEqual(Either.right({}))
    expect(Either.isRight(validateFlowInputs(optional, { company_name: "", channels: [] }))).toBe(true)
    expect(Either.isRight(validateFlowInputs(optional, undefined))).toBe(true)
  })
})

describe("validateFlowInputs: the messages", () => {
  const flow = everyType(true)

  it("names a missing required input with its label", () => {
    const { seats: _seats, ...rest } = valid
    expect(problemsOf(flow, rest)).toEqual(['inputs.seats: missing; "Seats" is required'])
  })

  it("names a value outside the options, and lists them", () => {
    expect(problemsOf(flow, { ...valid, plan: "Gold" })).toEqual(['inputs.plan: "Gold" is not one of the options: Basic, Pro'])
    expect(problemsOf(flow, { ...valid, channels: ["email", "fax"] })).toEqual([
      'inputs.channels[1]: "fax" is not one of the options: email, phone, chat'
    ])
  })

  it("names an unknown key and what the Flow takes", () => {
    expect(problemsOf(flow, { ...valid, budget: 5 })).toEqual([
      "inputs.budget: unknown input; this Flow takes company_name, notes, seats, trial, plan, channels, work_email, website, start_date"
    ])
    expect(problemsOf(flow, { ...valid, "odd key": 1 })[0]).toMatch(/^inputs\["odd key"\]: unknown input/)
  })

  it("names a wrong type", () => {
    expect(problemsOf(flow, { ...valid, seats: "12" })).toEqual(["inputs.seats: expected a number, got a string"])
    expect(problemsOf(flow, { ...valid, trial: "yes" })).toEqual(["inputs.trial: expected true or false, got a string"])
    expect(problemsOf(flow, { ...valid, company_name: null })).toEqual(["inputs.company_name: expected text, got null"])
    expect(problemsOf(flow, { ...valid, channels: "email" })).toEqual(["inputs.channels: expected a list of options, got a string"])
  })

  it("names formats, empties and repeats", () => {
    expect(problemsOf(flow, { ...valid, work_email: "nope" })).toEqual(['inputs.work_email: expected an email address, got "nope"'])
    expect(problemsOf(flow, { ...valid, website: "ftp://x.example" })).toEqual(['inputs.website: expected an http or https URL, got "ftp://x.example"'])
    expect(problemsOf(flow, { ...valid, start_date: "2026-02-30" })).toEqual(['inputs.start_date: expected a date as YYYY-MM-DD, got "2026-02-30"'])
    expect(problemsOf(flow, { ...valid, company_name: "" })).toEqual(['inputs.company_name: must not be empty; "Company name" is required'])
    expect(problemsOf(flow, { ...valid, channels: [] })).toEqual(['inputs.channels: choose at least one option; "Channels" is required'])
    expect(problemsOf(flow, { ...valid, channels: ["chat", "email", "chat"] })).toEqual(['inputs.channels: chooses "chat" more than once'])
  })

  it("refuses inputs that are not an object", () => {
    expect(problemsOf(flow, [valid])).toEqual(["inputs: expected an object keyed by parameter name, got a list"])
    expect(problemsOf(flow, "x")).toEqual(["inputs: expected an object keyed by parameter name, got a string"])
  })

  it("names at most 100 problems and counts the rest", () => {
    const unknown = Object.fromEntries(Array.from({ length: 150 }, (_, index) => [`extra_${index}`, index]))
    const found = problemsOf(flow, { ...valid, ...unknown })
    expect(found).toHaveLength(101)
    expect(found[0]).toMatch(/^inputs\.extra_0: unknown input/)
    expect(found[100]).toBe("… and 50 more problems")
  })

  it("handles parameter names that are also names of object properties", () => {
    const odd = checked({
      name: "Odd",
      questions: [{ label: "Constructor", type: "text", required: true }, { label: "To String", type: "text" }],
      steps: [{ type: "template", name: "out", template: "{{constructor}}{{to_string}}" }]
    })
    expect(validateFlowInputs(odd, { constructor: "x" })).toEqual(Either.right({ constructor: "x" }))
    expect(problemsOf(odd, {})).toEqual(['inputs.constructor: missing; "Constructor" is required'])
    expect(problemsOf(odd, { constructor: "x", hasOwnProperty: "y" })).toEqual([
      "inputs.hasOwnProperty: unknown input; this Flow takes constructor, to_string"
    ])
    expect(problemsOf(odd, JSON.parse('{"constructor": "x", "__proto__": {"to_string": 1}}'))).toEqual([
      "inputs.__proto__: unknown input; this Flow takes constructor, to_string"
    ])
  })

  it("names every problem at once", () => {
    const { seats: _seats, trial: _trial, ...rest } = valid
    expect(problemsOf(flow, { ...rest, plan: "Gold", channels: ["fax", "email", "sms"], work_email: 3, budget: 1 })).toEqual([
      'inputs.seats: missing; "Seats" is required',
      'inputs.trial: missing; "Trial?" is required',
      "inputs.budget: unknown input; this Flow takes company_name, notes, seats, trial, plan, channels, work_email, website, start_date",
      'inputs.plan: "Gold" is not one of the options: Basic, Pro',
      'inputs.channels[0]: "fax" is not one of the options: email, phone, chat',
      'inputs.channels[2]: "sms" is not one of the options: email, phone, chat',
      "inputs.work_email: expected text, got a number"
    ])
  })
})

describe("the schema and validateFlowInputs agree", () => {
  /** A deterministic generator (mulberry32), so a failure is reproducible. */
  const random = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  it("on every combination drawn from the table of values", () => {
    const independent = new Ajv2020({ allErrors: true })
    addFormats(independent)
    const next = random(20261123)
    const pick = <T>(values: ReadonlyArray<T>): T => values[Math.floor(next() * values.length)]!
    let accepted = 0
    let refused = 0
    for (const required of [true, false]) {
      const flow = everyType(required)
      const check = independent.compile(flowInputsSchema(flow))
      for (let round = 0; round < 400; round++) {
        const inputs: Record<string, unknown> = {}
        for (const [name, { accepts, refuses }] of Object.entries(cases)) {
          const roll = next()
          if (roll < 0.05) continue
          inputs[name] = roll < 0.95 ? pick(accepts) : pick(refuses)
        }
        if (next() < 0.1) inputs[pick(["extra", "Company name", "__proto__"])] = "x"
        const verdict = check(inputs)
        const result = validateFlowInputs(flow, inputs)
        expect(Either.isRight(result), JSON.stringify(inputs)).toBe(verdict)
        if (verdict) accepted++
        else refused++
      }
    }
    expect(accepted).toBeGreaterThan(50)
    expect(refused).toBeGreaterThan(50)
  })
})

describe("inputsValidator: compiled once per schema", () => {
  it("gives the same compiled function for an equal schema", () => {
    const first = inputsValidator(flowInputsSchema(everyType(true)))
    expect(inputsValidator(flowInputsSchema(everyType(true)))).toBe(first)
    expect(inputsValidator(flowInputsSchema(everyType(false)))).not.toBe(first)
  })

  it("drops the least recently used beyond its bound", () => {
    const schemaOf = (index: number) => ({ type: "object", properties: { [`p${index}`]: { type: "string" } }, additionalProperties: false })
    const kept = inputsValidator(schemaOf(0))
    const dropped = inputsValidator(schemaOf(1))
    for (let index = 2; index <= maxCachedValidators; index++) {
      inputsValidator(schemaOf(index))
      if (index % 100 === 0) expect(inputsValidator(schemaOf(0))).toBe(kept)
    }
    expect(inputsValidator(schemaOf(0))).toBe(kept)
    expect(inputsValidator(schemaOf(1))).not.toBe(dropped)
    const held = (ajv: Ajv2020): number => (ajv as unknown as { _cache: Map<unknown, unknown> })._cache.size
    const metaSchemas = held(new Ajv2020())
    expect(held(inputsAjv)).toBeLessThanOrEqual(metaSchemas + maxCachedValidators)
  })
})
