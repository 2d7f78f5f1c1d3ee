"use client";

import { useState, type ReactNode } from "react";
import type { PendingApproval, TranscriptItem } from "@/server/protocol";
import { diffOf, UnifiedDiff } from "@/components/editor/unified-diff";
import { ApprovalCard, fromPending } from "@/components/approvals/approval-card";
import { OpenOutIcon } from "@/components/shared/icons";
import { toolCardName } from "./tool-name";
import { ToolDiagnostics } from "./tool-diagnostics";

type ToolItem = Extract<TranscriptItem, { kind: "tool" }>;

/** Output longer than this many lines starts collapsed. */
const COLLAPSE_LINES = 12;

const STATE_STYLE: Record<ToolItem["state"], { label: string; className: string }> = {
  pending: { label: "pending", className: "text-muted" },
  waiting_approval: { label: "needs approval", className: "text-warn" },
  running: { label: "running", className: "text-accent" },
  completed: { label: "done", className: "text-ok" },
  error: { label: "error", className: "text-danger" },
};

/** A tool call as a card that follows its state; subagent calls nest inside it. */
export function ToolCard({
  item,
  approval,
  nested,
  onOpenDiff,
}: {
  item: ToolItem;
  approval?: PendingApproval;
  nested?: ReactNode;
  onOpenDiff?: (title: string, diff: string) => void;
}) {
  const style = STATE_STYLE[item.state];
  const diff = diffOf(item.display) ?? approval?.diff ?? null;
  const output = item.output ?? item.progress;
  const [argsOpen, setArgsOpen] = useState(false);
  return (
    <div
      className={`rounded-md border bg-panel font-mono text-xs ${item.state === "error" ? "border-danger/40" : item.state === "waiting_approval" ? "border-warn/50" : "border-border"}`}
      role="group"
      aria-label={toolCardName(item, approval)}
      data-testid="tool-card"
      data-state={item.state}
      data-tool={item.name}
    >
      <button
        type="button"
        className="flex w-full items-center gap-2 px-3 py-1.5 text-left"
        onClick={() => setArgsOpen((open) => !open)}
        aria-expanded={argsOpen}
      >
        <StateDot state={item.state} />
        <span className="text-accent">{item.name}</span>
        <span className="min-w-0 flex-1 truncate text-muted">{summarizeArgs(item.args)}</span>
        <span className={`shrink-0 ${style.className}`} data-testid="tool-state">
          {item.approvalStatus && item.state !== "waiting_approval" ? `${item.approvalStatus} · ` : ""}
          {style.label}
        </span>
      </button>
      {argsOpen ? (
        <pre
          className="mx-3 mb-2 max-h-60 overflow-auto whitespace-pre-wrap rounded bg-bg p-2 text-muted"
          data-testid="tool-args"
        >
          {JSON.stringify(item.args, null, 2)}
        </pre>
      ) : null}
      {diff ? (
        <div className="px-3 pb-2">
          <UnifiedDiff diff={diff} maxHeight="16rem" testId="tool-diff" />
          {onOpenDiff ? (
            <button
              type="button"
              className="mt-1 text-muted hover:text-accent"
              onClick={() => onOpenDiff(`${item.name}: ${pathOf(item.args) ?? item.id}`, diff)}
              data-testid="open-diff"
            >
              Open in editor <OpenOutIcon />
            </button>
          ) : null}
        </div>
      ) : null}
      {approval && item.state === "waiting_approval" ? (
        <div className="px-3 pb-2 font-sans">
          {/* The diff is shown once, above with "Open in editor"; the approval only decides. */}
          <ApprovalCard approval={{ ...fromPending(approval), detailsShownAbove: true }} />
        </div>
      ) : null}
      <ToolDiagnostics display={item.display} />
      {output && !diff ? <Output text={output} error={item.isError || item.state === "error"} /> : null}
      <Screenshot display={item.display} />
      {nested ? (
        <div className="ml-3 flex flex-col gap-1 border-l border-border py-1 pl-3 pr-2" data-testid="tool-children">
          {nested}
        </div>
      ) : null}
    </div>
  );
}

/** The browser tool's screenshot (its small copy; the model got the full picture). */
function Screenshot({ display }: { display: unknown }) {
  const shot = (display as { screenshot?: unknown; url?: unknown } | undefined)?.screenshot;
  if (typeof shot !== "string" || !shot.startsWith("data:image/jpeg;base64,")) return null;
  const url = (display as { url?: unknown }).url;
  return (
    <div className="px-3 pb-2">
      <img
        src={shot}
        alt={typeof url === "string" ? `Screenshot of ${url}` : "Screenshot"}
        className="max-h-80 rounded border border-border"
        data-testid="tool-screenshot"
      />
    </div>
  );
}

function Output({ text, error }: { text: string; error: boolean }) {
  const lines = text.split("\n");
  const long = lines.length > COLLAPSE_LINES;
  const [open, setOpen] = useState(false);
  const shown = long && !open ? lines.slice(-COLLAPSE_LINES).join("\n") : text;
  return (
    <div className="px-3 pb-2">
      {long ? (
        <button
          type="button"
          className="mb-1 text-muted hover:text-fg"
          onClick={() => setOpen((v) => !v)}
          data-testid="tool-output-toggle"
        >
          {open ? "Collapse output" : `Show all ${lines.length} lines`}
        </button>
      ) : null}
      <pre
        className={`max-h-80 overflow-auto whitespace-pre-wrap rounded bg-bg p-2 ${error ? "text-danger" : "text-muted"}`}
        data-testid="tool-output"
      >
        {shown}
      </pre>
    </div>
  );
}

function StateDot({ state }: { state: ToolItem["state"] }) {
  const color = {
    pending: "bg-muted",
    waiting_approval: "bg-warn",
    running: "bg-accent animate-pulse",
    completed: "bg-ok",
    error: "bg-danger",
  }[state];
  return <span aria-hidden className={`inline-block h-1.5 w-1.5 shrink-0 rounded-full ${color}`} />;
}

function pathOf(args: unknown): string | null {
  if (args && typeof args === "object") {
    const record = args as Record<string, unknown>;
    for (const key of ["path", "file_path", "file", "command", "pattern", "url", "description"]) {
      if (typeof record[key] === "string") return record[key] as string;
    }
  }
  return null;
}

function summarizeArgs(args: unknown): string {
  return pathOf(args) ?? (args === undefined ? "" : JSON.stringify(args));
}
