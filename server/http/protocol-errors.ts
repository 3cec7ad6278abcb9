/**
 * Answers Node's HTTP server gives on its own, before a request reaches the API: an `Expect` other
 * than `100-continue` (417), headers over Node's limit (431), a request that does not parse as
 * HTTP (400) or arrives too slowly (408: headers and body within `requestArrivalMs`, so a body that
 * stops arriving or trickles is cut). Node would send them bare; here they carry the error
 * envelope and an `X-Request-Id` like every other answer.
 */
import { type IncomingMessage, maxHeaderSize, type Server, type ServerResponse, STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"
import { type ApiFailure, InvalidRequest, PayloadTooLarge } from "../platform/errors.js"
import { envelopeBody } from "../platform/request/error-catalog.js"
import { newRequestId } from "./request-intake.js"
import { noteAnsweredInPlace } from "./request-log.js"

interface ProtocolAnswer {
  readonly status: number
  readonly error: ApiFailure
}

const answerOf = (error: NodeJS.ErrnoException): ProtocolAnswer => {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return {
        status: 431,
        error: new InvalidRequest({ message: `The request headers are over the ${maxHeaderSize / 1024} KB limit.` })
      }
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { status: 413, error: new PayloadTooLarge({ message: "The chunk extensions of the request body are too large." }) }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, error: new InvalidRequest({ message: "The request did not arrive in time." }) }
    default:
      return { status: 400, error: new InvalidRequest({ message: "The request is not valid HTTP/1.1." }) }
  }
}

const headersOf = (body: string) => ({
  "content-type": "application/json",
  "content-length": String(Buffer.byteLength(body)),
  "x-request-id": newRequestId(),
  connection: "close"
})

/** The raw HTTP/1.1 response for a connection Node could not read a request from. */
const rawResponse = ({ status, error }: ProtocolAnswer): string => {
  const body = JSON.stringify(envelopeBody(error))
  const head = Object.entries(headersOf(body)).map(([name, value]) => `${name}: ${value}\r\n`).join("")
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`
}

const onUnsupportedExpectation = (request: IncomingMessage, response: ServerResponse) => {
  const body = JSON.stringify(
    envelopeBody(
      new InvalidRequest({ message: `Expect: '${request.headers.expect ?? ""}' is not supported; only '100-continue' is.` })
    )
  )
  response.writeHead(417, headersOf(body)).end(body)
}

/** Errors that mean the client closed the connection: nobody is left to answer (the request is logged 499). */
const clientLeft = new Set(["ECONNRESET", "HPE_INVALID_EOF_STATE"])

const onClientError = (error: NodeJS.ErrnoException, socket: Duplex) => {
  // As Node does: answer only when nothing of another response was written on this connection yet.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage
  if (!clientLeft.has(error.code ?? "") && socket.writable && inFlight?.headersSent !== true) {
    const answer = answerOf(error)
    if (inFlight) noteAnsweredInPlace(inFlight, answer.status)
    socket.end(rawResponse(answer), () => socket.destroy())
  } else {
    socket.destroy()
  }
}

/** Makes Node's own answers on `server` carry the error envelope and a request id. */
export const withProtocolErrorEnvelopes = <S extends Server>(server: S): S => {
  server.on("checkExpectation", onUnsupportedExpectation)
  server.on("clientError", onClientError)
  return server
}
