"use client";

import type { TranscriptItem } from "@/server/protocol";

type HookItem = Extract<TranscriptItem, { kind: "hook" }>;

const OUTCOME_STYLE: Record<HookItem["outcome"], string> = {
  ok: "text-muted",
  approved: "text-ok",
  blocked: "text-warn",
  timed_out: "text-danger",
  failed: "text-danger",
};

/** One run of a lifecycle hook (server/hooks): event, command, exit code and time. */
export function HookRow({ item }: { item: HookItem }) {
  const exit =
    item.exitCode === null
      ? item.outcome === "timed_out"
        ? "killed at its time limit"
        : "no exit code"
      : `exit ${item.exitCode}`;
  return (
    <div
      className={`flex min-w-0 items-baseline gap-2 font-mono text-[11px] ${OUTCOME_STYLE[item.outcome]}`}
      data-testid="hook-row"
      data-outcome={item.outcome}
      title={`${item.file}${item.reason ? `\n${item.reason}` : ""}`}
    >
      <span className="shrink-0">⚓ {item.event}</span>
      <span className="min-w-0 flex-1 truncate">{item.command}</span>
      <span className="shrink-0">
        {item.outcome === "ok" ? "" : `${item.outcome.replace("_", " ")} · `}
        {exit} · {item.ms} ms
      </span>
    </div>
  );
}
