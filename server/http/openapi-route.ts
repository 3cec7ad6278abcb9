/**
 * `GET /api/v1/openapi.json`: the OpenAPI document of the API, with `servers` naming the address
 * that served it (the request's `Host`), so a client or a linter pointed at any `svc serve` calls
 * that server. The document is generated once; its text is kept per address (a handful at most).
 */
import { HttpApi, HttpApiBuilder, HttpServerRequest, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect } from "effect"
import { requestOrigin } from "./request-url.js"

const keptAddresses = 16

/** Serves the API's OpenAPI document at `path`, its `servers` the address asked. */
export const openApiRoute = (path: `/${string}`) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const { api } = yield* HttpApi.Api
      const spec = OpenApi.fromApi(api)
      const texts = new Map<string, string>()
      yield* router.get(
        path,
        Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
          const origin = requestOrigin(request)
          let text = texts.get(origin)
          if (text === undefined) {
            if (texts.size >= keptAddresses) texts.clear()
            text = JSON.stringify({ ...spec, servers: [{ url: origin, description: "The `svc serve` that served this document." }] })
            texts.set(origin, text)
          }
          return HttpServerResponse.text(text, { contentType: "application/json" })
        })
      )
    })
  )
