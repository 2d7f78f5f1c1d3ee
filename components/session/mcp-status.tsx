"use client";

import { McpStatusView } from "@/server/protocol";
import { useEffect, useState } from "react";
import { api } from "@/components/transport/client";

/**
 * A small "MCP n/m" badge in the session header: how many of the session's MCP
 * servers are running; the tooltip lists each with its state and error. Hidden
 * when the session has none. Refreshed when a turn starts or ends (`refreshKey`).
 */
export function McpStatus({ sessionId, refreshKey }: { sessionId: string; refreshKey?: unknown }) {
  const [status, setStatus] = useState<McpStatusView | null>(null);
  useEffect(() => {
    let cancelled = false;
    const load = () =>
      api(`/api/v1/sessions/${sessionId}/mcp`, McpStatusView)
        .then((view) => {
          if (!cancelled) setStatus(view);
        })
        .catch(() => undefined); // an older bridge without the route: no badge
    void load();
    // Servers finish starting a moment after the turn that starts them.
    const later = setTimeout(load, 3_000);
    return () => {
      cancelled = true;
      clearTimeout(later);
    };
  }, [sessionId, refreshKey]);

  if (!status || (status.servers.length === 0 && status.errors.length === 0)) return null;
  const ready = status.servers.filter((server) => server.state === "ready").length;
  const broken =
    status.servers.some((server) => server.state === "failed" || server.state === "closed") || status.errors.length > 0;
  const idle = status.servers.every((server) => server.state === "idle");
  const lines = [
    ...status.servers.map((server) => {
      const tools = server.state === "ready" ? `, ${server.toolCount} tools` : "";
      const from = server.source === "client" ? " (from the editor)" : "";
      return `${server.name}${from}: ${server.state}${tools}${server.error ? ` — ${server.error.split("\n")[0]}` : ""}`;
    }),
    ...status.errors,
    ...(idle ? ["Servers start with the session's first turn."] : []),
  ];
  return (
    <span
      className={`rounded border border-border px-1.5 font-mono ${broken ? "text-warn" : ready > 0 ? "text-ok" : "text-muted"}`}
      title={lines.join("\n")}
      data-testid="mcp-status"
      data-state={broken ? "degraded" : idle ? "idle" : "ok"}
    >
      MCP {ready}/{status.servers.length}
    </span>
  );
}
