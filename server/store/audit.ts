import { redactSecrets } from "../secrets/redact";
import type { PrismaClient } from "./generated/prisma/client";

/** A shell command as the audit log keeps it (the same shape tools pass to `ctx.audit`). */
export interface CommandAuditRecord {
  command: string;
  cwd: string;
  riskLevel: string;
  actionType: string;
  approved: boolean;
  /** The rule or person that approved or rejected it. */
  decidedBy?: string;
  exitCode?: number | null;
  durationMs?: number;
  sessionId?: string;
  turnId?: string;
}

export interface AuditedCommand extends CommandAuditRecord {
  id: number;
  createdAt: Date;
}

/** The audit table is all this file needs, so tests and callers may pass a narrower client. */
type AuditDb = Pick<PrismaClient, "auditCommand">;

/** Largest page `listCommands` returns. */
const MAX_AUDIT_PAGE = 1000;

/** Records one shell command. The command is redacted again here: nothing unredacted reaches the table. */
export async function recordCommand(db: AuditDb, record: CommandAuditRecord): Promise<void> {
  await db.auditCommand.create({
    data: {
      command: redactSecrets(record.command),
      cwd: record.cwd,
      riskLevel: record.riskLevel,
      actionType: record.actionType,
      approved: record.approved,
      decidedBy: record.decidedBy ?? null,
      exitCode: record.exitCode ?? null,
      durationMs: record.durationMs === undefined ? null : Math.round(record.durationMs),
      sessionId: record.sessionId ?? null,
      turnId: record.turnId ?? null,
    },
  });
}

/** The newest commands first. */
export async function listCommands(
  db: AuditDb,
  options: { limit?: number; sessionId?: string } = {},
): Promise<AuditedCommand[]> {
  const rows = await db.auditCommand.findMany({
    where: options.sessionId ? { sessionId: options.sessionId } : undefined,
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: Math.min(Math.max(options.limit ?? 100, 1), MAX_AUDIT_PAGE),
  });
  return rows.map((row) => ({
    id: row.id,
    command: row.command,
    cwd: row.cwd,
    riskLevel: row.riskLevel,
    actionType: row.actionType,
    approved: row.approved,
    decidedBy: row.decidedBy ?? undefined,
    exitCode: row.exitCode,
    durationMs: row.durationMs ?? undefined,
    sessionId: row.sessionId ?? undefined,
    turnId: row.turnId ?? undefined,
    createdAt: row.createdAt,
  }));
}
