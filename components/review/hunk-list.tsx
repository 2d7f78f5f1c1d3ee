"use client";

import type { ReviewFile } from "@/server/protocol";

/** Lines of a hunk side shown in its preview; the merge view above has the rest. */
const PREVIEW_LINES = 8;

/** The hunks of one file, each with Accept and Revert (none for a page that may not review). */
export function HunkList({
  file,
  busy,
  reviews,
  onAccept,
  onRevert,
}: {
  file: ReviewFile;
  busy: boolean;
  reviews: boolean;
  onAccept: (hunk: string) => void;
  onRevert: (hunk: string) => void;
}) {
  if (file.hunks.length === 0) return null;
  return (
    <ol className="flex flex-col gap-2 p-2" aria-label={`Changes in ${file.path}`} data-testid="hunk-list">
      {file.hunks.map((hunk) => (
        <li
          key={hunk.id}
          className={`rounded border ${hunk.accepted ? "border-ok/60" : "border-border"} bg-panel`}
          data-testid="hunk"
          data-accepted={hunk.accepted}
        >
          <div className="flex flex-wrap items-center gap-2 border-b border-border px-2 py-1 text-xs">
            <span className="font-mono text-muted">
              {hunk.new_lines > 0
                ? `lines ${hunk.new_start}–${hunk.new_start + hunk.new_lines - 1}`
                : `after line ${hunk.new_start}`}
            </span>
            <span className="text-ok">+{hunk.new_lines}</span>
            <span className="text-danger">−{hunk.old_lines}</span>
            {hunk.accepted ? <span className="text-ok">✓ accepted</span> : null}
            {reviews ? (
              <span className="ml-auto flex gap-1">
                {!hunk.accepted ? (
                  <button
                    type="button"
                    className="min-h-7 rounded px-2 hover:bg-raised disabled:opacity-50"
                    disabled={busy}
                    onClick={() => onAccept(hunk.id)}
                    data-testid="hunk-accept"
                  >
                    Accept
                  </button>
                ) : null}
                <button
                  type="button"
                  className="min-h-7 rounded px-2 text-danger hover:bg-danger/10 disabled:opacity-50"
                  disabled={busy}
                  onClick={() => onRevert(hunk.id)}
                  data-testid="hunk-revert"
                  title="Put these lines back as they were at the base (undoable)"
                >
                  Revert
                </button>
              </span>
            ) : null}
          </div>
          <pre className="overflow-x-auto px-2 py-1 font-mono text-xs leading-5">
            {preview(hunk.old_text).map((line, i) => (
              <div key={`o${i}`} className="bg-danger/10 text-danger">
                −{line}
              </div>
            ))}
            {preview(hunk.new_text).map((line, i) => (
              <div key={`n${i}`} className="bg-ok/10 text-ok">
                +{line}
              </div>
            ))}
          </pre>
        </li>
      ))}
    </ol>
  );
}

function preview(text: string): string[] {
  if (!text) return [];
  const lines = text.replace(/\n$/, "").split("\n");
  return lines.length > PREVIEW_LINES
    ? [...lines.slice(0, PREVIEW_LINES), `… ${lines.length - PREVIEW_LINES} more`]
    : lines;
}
