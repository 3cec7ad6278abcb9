/**
 * Knowledgebase reads and writes the suites share, through the real HTTP server: the changes feed,
 * a Knowledgebase's detail, pages and folders; and an organization's credits, set and read by the
 * admin.
 */
import { Effect } from "effect"
import { expect } from "vitest"
import { AccountsService } from "../../server/identity/service.js"
import type { TestServer } from "./server.js"

const withKey = (key: string | undefined) => (key === undefined ? {} : { key })

/** Every entry of a Knowledgebase's (or `all`'s) changes feed, in one page. */
export const changesOf = async (server: TestServer, kb: string, key?: string): Promise<Array<any>> => {
  const response = await server.request("GET", `/knowledgebases/${kb}/changes?limit=200`, withKey(key))
  expect(response.status).toBe(200)
  expect(response.body.nextCursor).toBeNull()
  return response.body.changes
}

/** The latest feed entry of one object, if any (the feed keeps every change). */
export const changeOf = async (server: TestServer, kb: string, id: string) =>
  (await changesOf(server, kb)).filter((entry) => entry.id === id).at(-1)

/** `GET /knowledgebases/{kb}`'s knowledgebase. */
export const detailOf = async (server: TestServer, kb: string, key?: string) => {
  const response = await server.request("GET", `/knowledgebases/${kb}`, withKey(key))
  expect(response.status).toBe(200)
  return response.body.knowledgebase
}

/** Creates a page (or folder) and returns its id; fails the test unless 201. */
export const createPage = async (server: TestServer, kb: string, body: Record<string, unknown>, key?: string): Promise<string> => {
  const response = await server.request("POST", `/knowledgebases/${kb}/pages`, { body, ...withKey(key) })
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 201 })
  return response.body.page.id
}

/** Creates a folder and returns its id. */
export const createFolder = (server: TestServer, kb: string, title: string, parentPageId?: string) =>
  createPage(server, kb, { title, templateKey: "folder", ...(parentPageId === undefined ? {} : { parentPageId }) })

/** `GET /knowledgebases/{kb}/pages/{id}`'s page. */
export const readPage = async (server: TestServer, kb: string, pageId: string, key?: string) => {
  const response = await server.request("GET", `/knowledgebases/${kb}/pages/${pageId}`, withKey(key))
  expect(response.status).toBe(200)
  return response.body.page
}

/** The organization as the admin sees it (credits left and used). */
export const organizationOf = (server: TestServer, slug = "default") =>
  server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.organization(slug)))

/** Sets the credits an organization has left. */
export const setCredits = (server: TestServer, credits: number, slug = "default") =>
  server.admin(Effect.flatMap(AccountsService, (accounts) => accounts.setOrganization(slug, { credits })))
