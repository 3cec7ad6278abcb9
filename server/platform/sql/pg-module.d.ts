/** The part of `pg` (node-postgres, a dependency of `@effect/sql-pg`, shipped without types) the service uses. */
declare module "pg" {
  namespace pg {
    interface PoolConfig {
      connectionString?: string | undefined
      max?: number | undefined
      application_name?: string | undefined
      types?: { getTypeParser: (oid: number, format?: string) => (value: string) => unknown } | undefined
    }
    interface QueryResult<R = any> {
      rows: Array<R>
      rowCount: number | null
    }
    interface QueryConfig {
      text: string
      values?: ReadonlyArray<unknown> | undefined
      rowMode?: "array" | undefined
      name?: string | undefined
    }
    class Client {
      constructor(config?: PoolConfig)
      connect(): Promise<void>
      query<R = any>(text: string | QueryConfig, values?: ReadonlyArray<unknown>): Promise<QueryResult<R>>
      end(): Promise<void>
      on(event: string, listener: (...args: Array<any>) => void): this
    }
    interface PoolClient extends Client {
      release(error?: unknown): void
    }
    class Pool {
      constructor(config?: PoolConfig)
      readonly options: PoolConfig
      connect(): Promise<PoolClient>
      query<R = any>(text: string | QueryConfig, values?: ReadonlyArray<unknown>): Promise<QueryResult<R>>
      end(): Promise<void>
      on(event: "connect", listener: (client: PoolClient) => void): this
      on(event: string, listener: (...args: Array<any>) => void): this
    }
    const types: { getTypeParser: (oid: number, format?: string) => (value: string) => unknown }
    function escapeIdentifier(name: string): string
    function escapeLiteral(text: string): string
  }
  export default pg
}
