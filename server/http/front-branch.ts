/**
 * A seam on the Node HTTP server: branches that answer some requests straight from Node's
 * `IncomingMessage`/`ServerResponse`, before the request becomes an Effect HTTP request and reaches
 * the API's router (the MCP server: its protocol stack is plain promises, and the fiber, middleware
 * and response conversion of Effect's HTTP stack around it cost more than the request's own work).
 * Every other request goes on to the listeners Effect registered.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http"

/** Answers a request itself and says so (true), or leaves it to the API (false). */
export type FrontBranch = (request: IncomingMessage, response: ServerResponse) => boolean

/** Where branches are put in front of one server's request listeners. */
export interface FrontBranches {
  /** Puts `branch` in front (after the branches already there); the returned function takes it away. */
  readonly add: (branch: FrontBranch) => () => void
  /** Hands a request a branch took on to the listeners behind the branches (the API). */
  readonly pass: (request: IncomingMessage, response: ServerResponse) => void
}

/** The first step of every request; when it answers a promise, the request goes on once it settles. */
export type Intake = (request: IncomingMessage, response: ServerResponse) => Promise<void> | undefined

/**
 * Routes `server`'s requests through front branches first; answers where to add them. `intake`
 * sees every request first, whoever answers it (`request-intake.ts`), and may hold it until a
 * promise settles (the data-version sync on PostgreSQL).
 */
export const withFrontBranches = (server: Server, intake?: Intake): FrontBranches => {
  const branches: Array<FrontBranch> = []
  const emit = server.emit.bind(server) as (event: string | symbol, ...args: Array<unknown>) => boolean
  const dispatch = (request: IncomingMessage, response: ServerResponse): boolean => {
    for (const branch of branches) if (branch(request, response)) return true
    return emit("request", request, response)
  }
  server.emit = ((event: string | symbol, ...args: Array<unknown>): boolean => {
    if (event !== "request") return emit(event, ...args)
    const [request, response] = args as [IncomingMessage, ServerResponse]
    const ready = intake?.(request, response)
    if (ready === undefined) return dispatch(request, response)
    const go = () => void dispatch(request, response)
    ready.then(go, go)
    return true
  }) as Server["emit"]
  return {
    pass: (request, response) => void emit("request", request, response),
    add: (branch) => {
      branches.push(branch)
      return () => {
        const index = branches.indexOf(branch)
        if (index >= 0) branches.splice(index, 1)
      }
    }
  }
}
