"use client";

import * as z from "zod";
import { useEffect, useState } from "react";
import { ApprovalView } from "@/server/protocol";
import { api } from "@/components/transport/client";
import { RiskBadge } from "./risk-badge";
import { useDecidedVersion } from "@/components/shared/approvals-store";

const STATUS_STYLE: Record<string, string> = {
  approved: "text-ok",
  rejected: "text-danger",
  interrupted: "text-warn",
  cancelled: "text-muted",
};

/** Decided requests, newest first: who decided, when, and what. */
export function HistoryPanel() {
  const version = useDecidedVersion();
  const [rows, setRows] = useState<ApprovalView[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    api("/api/v1/approvals?status=decided&limit=200", z.array(ApprovalView)).then(setRows, (err: Error) =>
      setError(err.message),
    );
  }, [version]);

  if (error) return <p className="text-danger">{error}</p>;
  if (!rows) return <p className="text-muted">Loading…</p>;
  if (rows.length === 0) return <p className="py-12 text-center text-muted">No decisions yet.</p>;
  return (
    <ul
      className="flex flex-col divide-y divide-border rounded-md border border-border bg-panel"
      data-testid="approvals-history"
    >
      {rows.map((row) => (
        <li
          key={row.approval_id}
          className="flex flex-col gap-1 px-3 py-2"
          data-testid="history-row"
          data-status={row.status}
        >
          <div className="flex flex-wrap items-center gap-2 text-xs">
            <span className={`font-medium ${STATUS_STYLE[row.status] ?? ""}`}>{row.status}</span>
            {row.decision ? <span className="text-muted">{row.decision.replace("_", " ")}</span> : null}
            <RiskBadge level={row.risk_level} />
            <a href={`/s/${row.session_id}`} className="truncate hover:underline">
              {row.session_title}
            </a>
            <span className="ml-auto text-muted">
              {row.decided_by ? `by ${row.decided_by}` : ""}{" "}
              {row.decided_at ? new Date(row.decided_at).toLocaleString() : ""}
            </span>
          </div>
          <div className="break-all font-mono text-xs">{row.description}</div>
          {row.feedback ? <div className="text-xs text-muted">Feedback: {row.feedback}</div> : null}
          {row.status === "interrupted" ? (
            <div className="text-xs text-warn">
              The bridge stopped while this waited; open the session to resume the task.
            </div>
          ) : null}
        </li>
      ))}
    </ul>
  );
}
