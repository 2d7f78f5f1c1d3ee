"use client";

import { useCallback, useEffect, useState } from "react";
import * as z from "zod";
import { HooksFileView } from "@/server/protocol";
import { api } from "@/components/transport/client";

const HooksFiles = z.array(HooksFileView);
const Trusted = z.object({ trusted: z.literal(true) });

/**
 * A workspace's hooks files that do not run yet (server/hooks): the file, the commands it would
 * run and a Trust button, and files with errors. Read again when a turn ends (a changed file asks again).
 */
export function HooksTrust({ sessionId, running }: { sessionId: string; running: boolean }) {
  const [files, setFiles] = useState<HooksFileView[]>([]);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(() => {
    api(`/api/v1/sessions/${encodeURIComponent(sessionId)}/hooks`, HooksFiles)
      .then(setFiles)
      // A bridge without hooks (or unreachable for a moment) shows nothing here.
      .catch(() => setFiles([]));
  }, [sessionId]);
  useEffect(() => {
    if (!running) load();
  }, [load, running]);

  const trust = async (file: HooksFileView) => {
    try {
      await api("/api/v1/hooks/trust", Trusted, { method: "POST", body: { file: file.file, sha256: file.sha256 } });
      setError(null);
      load();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  const shown = files.filter((file) => file.error || !file.trusted);
  if (shown.length === 0) return null;
  return (
    <div className="shrink-0 border-b border-warn/40 bg-warn/10 px-3 py-2 text-xs" data-testid="hooks-trust">
      {shown.map((file) => (
        <div key={`${file.file}@${file.sha256}`} className="mb-1 last:mb-0" data-testid="hooks-file">
          <div className="font-mono text-fg">{file.file}</div>
          {file.error ? (
            <div className="text-danger">{file.error}</div>
          ) : (
            <>
              <div className="text-warn">
                These hooks do not run until you trust them. They would run on this workspace&apos;s machine:
              </div>
              <ul className="my-1 list-inside list-disc font-mono text-muted">
                {file.commands.map((command, index) => (
                  <li key={index}>
                    {command.event}
                    {command.matcher ? ` (${command.matcher})` : ""}: {command.command}
                  </li>
                ))}
              </ul>
              <button
                type="button"
                className="rounded bg-raised px-2 py-0.5 text-fg hover:bg-accent/20"
                onClick={() => void trust(file)}
                data-testid="hooks-trust-button"
              >
                Trust these hooks
              </button>
            </>
          )}
        </div>
      ))}
      {error ? <div className="text-danger">{error}</div> : null}
    </div>
  );
}
