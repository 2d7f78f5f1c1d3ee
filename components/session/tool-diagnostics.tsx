"use client";

import type { FileDiagnosticView } from "@/server/protocol";
import { useOpenFile } from "./open-file-context";

/** The language server's errors an edit left (server/diagnostics); each line number opens the editor there. */
export function ToolDiagnostics({ display }: { display: Record<string, unknown> | undefined }) {
  const open = useOpenFile();
  const diagnostics = display?.diagnostics as FileDiagnosticView[] | undefined;
  const path = typeof display?.path === "string" ? display.path : undefined;
  if (!diagnostics?.length || !path) return null;
  const total = typeof display?.diagnosticsTotal === "number" ? display.diagnosticsTotal : diagnostics.length;
  return (
    <div className="px-3 pb-2" data-testid="tool-diagnostics">
      <div className="mb-1 text-warn">
        {total} error{total === 1 ? "" : "s"} in {path} after this edit (the edit was applied):
      </div>
      <ul className="flex flex-col gap-0.5">
        {diagnostics.map((diagnostic, index) => (
          <li key={index} className="flex gap-2">
            {open ? (
              <button
                type="button"
                className="shrink-0 text-accent hover:underline"
                onClick={() => open(path, diagnostic.line)}
                data-testid="diagnostic-line"
              >
                {path}:{diagnostic.line}:{diagnostic.column}
              </button>
            ) : (
              <span className="shrink-0 text-muted">
                {path}:{diagnostic.line}:{diagnostic.column}
              </span>
            )}
            <span className="text-danger">{diagnostic.message}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
