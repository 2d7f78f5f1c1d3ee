import { WorldlineError } from "../errors";

/**
 * What a failed database call means for the caller: the database is unreachable (connection
 * refused or lost, starting up, shutting down), the disk under it is full, or it is locked by
 * another process (SQLite). These are passing states worth retrying; anything else is not.
 */
export type StoreFault = "store:unavailable" | "disk:full" | "store:locked";

/** SQLSTATE classes and codes of a database that is not answering (or answering nothing useful). */
const UNREACHABLE_SQLSTATES = /^(08|57P0[1-3]|53300)/;
const DISK_FULL_SQLSTATES = /^(53100)$/;
const UNREACHABLE_TEXT =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|Connection terminated|connection (?:is )?closed|not queryable|Client was closed|terminating connection|the database system is (?:starting up|shutting down)|Can't reach database|DatabaseNotReachable|ConnectionClosed|SocketTimeout|Timed out fetching a new connection|SQLITE_CANTOPEN|SQLITE_IOERR|disk I\/O error/i;
const DISK_FULL_TEXT = /ENOSPC|No space left on device|SQLITE_FULL|database or disk is full|could not extend file/i;
/**
 * Prisma's own codes for a database it cannot reach or get a connection or transaction from in time
 * (P1001 unreachable, P1002 timed out, P1017 connection closed, P2024 pool timeout, P2028 a
 * transaction not started or ended in time: during an outage, waiting for a connection).
 */
const UNREACHABLE_PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024", "P2028"]);
const LOCKED_TEXT = /SQLITE_BUSY|database is locked|SocketTimeout.*locked|DatabaseTimeout/i;

/** The fault behind a failed store call, or null for an error retrying cannot fix (a bug, a bad row, a conflict). */
export function storeFault(error: unknown): StoreFault | null {
  const seen = new Set<unknown>();
  const texts: string[] = [];
  let sqlState: string | undefined;
  // Prisma wraps the driver's error (cause, meta.driverAdapterError): look through all of it.
  const visit = (value: unknown, depth: number) => {
    if (!value || typeof value !== "object" || seen.has(value) || depth > 6) return;
    seen.add(value);
    const record = value as Record<string, unknown>;
    for (const key of ["message", "code", "kind", "originalCode", "originalMessage"]) {
      if (typeof record[key] === "string") texts.push(record[key]);
    }
    // A SQLSTATE, not one of Prisma's own codes (P and four digits) that wrap it.
    const code = record.code ?? record.originalCode;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !/^P\d{4}$/.test(code)) sqlState ??= code;
    for (const key of ["cause", "meta", "driverAdapterError", "error"]) visit(record[key], depth + 1);
  };
  visit(error, 0);
  if (typeof error === "string") texts.push(error);
  const text = texts.join(" | ");
  if (sqlState && DISK_FULL_SQLSTATES.test(sqlState)) return "disk:full";
  if (DISK_FULL_TEXT.test(text)) return "disk:full";
  if (LOCKED_TEXT.test(text)) return "store:locked";
  if (sqlState && UNREACHABLE_SQLSTATES.test(sqlState)) return "store:unavailable";
  if (texts.some((text) => UNREACHABLE_PRISMA_CODES.has(text))) return "store:unavailable";
  if (UNREACHABLE_TEXT.test(text)) return "store:unavailable";
  return null;
}

/** What a person reads about a fault (the transcript, the API's 503, the bridge log). */
export function describeFault(fault: StoreFault): string {
  switch (fault) {
    case "disk:full":
      return "disk full";
    case "store:locked":
      return "database locked by another process";
    default:
      return "database unreachable";
  }
}

/**
 * The API's error for a fault: 503 with a specific code (README, "When the database, Redis or the
 * disk goes away"). A lock is reported as the store being unavailable.
 */
export function faultError(fault: StoreFault, cause?: unknown): WorldlineError {
  const code = fault === "disk:full" ? "disk:full" : "store:unavailable";
  const message =
    fault === "disk:full"
      ? "The disk under the database is full; free space and try again."
      : fault === "store:locked"
        ? "The database is locked by another process; try again shortly."
        : "The database is unreachable; the bridge keeps retrying. Try again shortly.";
  return new WorldlineError(code, message, { cause, details: { retryable: true } });
}
