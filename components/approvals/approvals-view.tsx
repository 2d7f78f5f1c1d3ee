"use client";

import { useState } from "react";
import { AttentionMenu } from "@/components/attention/attention-menu";
import { useApprovalsAttention } from "@/components/attention/use-approvals-attention";
import { usePendingApprovals } from "@/components/shared/approvals-store";
import { HistoryPanel } from "./history-panel";
import { shortcutsOf } from "@/components/shared/shortcuts";
import { useDrivenSessions } from "@/components/shared/use-access";
import { PendingQueue } from "./pending-queue";
import { RulesPanel } from "./rules-panel";

type Tab = "pending" | "history" | "rules";

/** The /approvals page: the live queue across sessions, its history and the rules. */
export function ApprovalsView() {
  const pending = usePendingApprovals();
  const [tab, setTab] = useState<Tab>("pending");
  // The decision keys are offered only where this page may decide; the other requests show as waiting.
  const driven = useDrivenSessions(pending.map((approval) => approval.session_id));
  const decides = pending.some((approval) => driven?.has(approval.session_id));
  useApprovalsAttention();

  return (
    <div className="mx-auto flex max-w-4xl flex-col gap-4 p-3 sm:p-6" data-testid="approvals-page">
      <header className="flex flex-wrap items-center gap-3">
        <h1 className="text-base font-semibold">Approvals</h1>
        <nav className="flex gap-1" role="tablist" aria-label="Approvals">
          {(["pending", "history", "rules"] as const).map((name) => (
            <button
              key={name}
              type="button"
              role="tab"
              aria-selected={tab === name}
              className={`rounded px-2 py-1 capitalize ${tab === name ? "bg-raised text-fg" : "text-muted hover:text-fg"}`}
              onClick={() => setTab(name)}
              data-testid={`approvals-tab-${name}`}
            >
              {name}
              {name === "pending" ? (
                <span className="ml-1 text-xs text-muted" data-testid="approvals-count">
                  {pending.length}
                </span>
              ) : null}
            </button>
          ))}
        </nav>
        <span className="ml-auto">
          <AttentionMenu />
        </span>
        {/* Read when the count changes (a request arrives or is decided anywhere), not on load. */}
        <p className="sr-only" role="status" data-testid="approvals-announcer">
          {pending.length === 1 ? "1 request waiting" : `${pending.length} requests waiting`}
        </p>
      </header>
      {tab === "pending" ? (
        <>
          {decides ? (
            <p className="hidden flex-wrap gap-3 text-xs text-muted sm:flex" data-testid="approvals-shortcuts">
              <span>On a request:</span>
              {shortcutsOf("approvals").map((shortcut) => (
                <span key={shortcut.keys}>
                  <kbd className="rounded border border-border px-1 font-mono">{shortcut.keys}</kbd>{" "}
                  {shortcut.does.toLowerCase()}
                </span>
              ))}
            </p>
          ) : null}
          <PendingQueue pending={pending} />
        </>
      ) : tab === "history" ? (
        <HistoryPanel />
      ) : (
        <RulesPanel />
      )}
    </div>
  );
}
