import * as z from "zod";
import { AuditCommandView, AuditQuery } from "../../../protocol";
import { WorldlineError } from "../../../errors";
import { redactSecrets } from "../../../secrets";
import type { Route } from "../router";

export const auditRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/audit/commands",
    doc: {
      summary: "Shell commands the agent ran or was refused, newest first (redacted)",
      tags: ["audit"],
      query: AuditQuery,
      response: z.array(AuditCommandView),
    },
    handler: async ({ services, query }): Promise<AuditCommandView[]> => {
      const { session_id, limit } = AuditQuery.parse(Object.fromEntries(query));
      if (!services.audit) throw new WorldlineError("audit:unavailable", "This bridge keeps no audit log.");
      const rows = await services.audit.list({ sessionId: session_id, limit });
      return rows.map((row) => ({
        id: row.id,
        // Rows are redacted when written; redacting again on the way out costs little.
        command: redactSecrets(row.command),
        cwd: row.cwd,
        risk_level: row.riskLevel,
        action_type: row.actionType,
        approved: row.approved,
        decided_by: row.decidedBy ?? null,
        exit_code: row.exitCode ?? null,
        duration_ms: row.durationMs ?? null,
        session_id: row.sessionId ?? null,
        task_id: row.turnId ?? null,
        created_at: row.createdAt.toISOString(),
      }));
    },
  },
];
