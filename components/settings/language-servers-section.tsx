"use client";

import { useEffect, useState } from "react";
import * as z from "zod";
import { LanguageServerStatus } from "@/server/protocol";
import { api } from "@/components/transport/client";

const Statuses = z.array(LanguageServerStatus);

/** The language servers behind the errors shown after edits (server/diagnostics), and why one gives none. */
export function LanguageServersSection() {
  const [servers, setServers] = useState<LanguageServerStatus[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api("/api/v1/diagnostics", Statuses).then(setServers, (err: Error) => setError(err.message));
  }, []);
  if (error) return <p className="text-xs text-danger">{error}</p>;
  if (!servers) return null;
  if (servers.length === 0) {
    return (
      <p className="text-xs text-muted" data-testid="language-servers-empty">
        None started yet: a language server starts on the agent&apos;s first edit of a TypeScript, JavaScript or Python
        file.
      </p>
    );
  }
  return (
    <ul className="flex flex-col gap-1 text-xs" data-testid="language-servers">
      {servers.map((server) => (
        <li key={`${server.workspace}-${server.language}`} className="flex flex-wrap gap-2">
          <span className="font-mono">{server.language}</span>
          <span className="truncate font-mono text-muted">{server.workspace}</span>
          <span className={server.state === "running" ? "text-ok" : "text-warn"}>
            {server.state === "running" ? "running" : `no diagnostics: ${server.note ?? "unavailable"}`}
          </span>
        </li>
      ))}
    </ul>
  );
}
