/** Logging: logfmt lines on stderr, so stdout carries only data (ready lines, JSON, MCP frames). */
import { Layer, Logger, LogLevel } from "effect"

/** Logs to stderr at `level` and above. */
export const StderrLogger = (level: LogLevel.LogLevel = LogLevel.Info) =>
  Layer.merge(
    Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)),
    Logger.minimumLogLevel(level)
  )
