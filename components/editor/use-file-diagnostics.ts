"use client";

import { useEffect, useState } from "react";
import { FileDiagnostics, type FileDiagnosticView } from "@/server/protocol";
import { api } from "@/components/transport/client";

/**
 * The errors a language server last published for a file of the session (server/diagnostics),
 * read again whenever the file's saved text changes (an agent's edit reloads it from disk).
 */
export function useFileDiagnostics(sessionId: string, path: string, savedText: string): FileDiagnosticView[] {
  const [diagnostics, setDiagnostics] = useState<FileDiagnosticView[]>([]);
  useEffect(() => {
    let live = true;
    const url = `/api/v1/sessions/${encodeURIComponent(sessionId)}/diagnostics?path=${encodeURIComponent(path)}`;
    api(url, FileDiagnostics)
      .then((body) => live && setDiagnostics(body.diagnostics ?? []))
      // No diagnostics is what an unreachable bridge shows; the editor works without them.
      .catch(() => live && setDiagnostics([]));
    return () => {
      live = false;
    };
  }, [sessionId, path, savedText]);
  return diagnostics;
}
