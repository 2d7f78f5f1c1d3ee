"use client";

import { useEffect, useState } from "react";
import { onNewRequest, usePendingApprovals } from "./approvals-store";
import { HistoryPanel } from "./history-panel";
import { PendingQueue, SHORTCUTS } from "./pending-queue";
import { RulesPanel } from "./rules-panel";

type Tab = "pending" | "history" | "rules";

const NOTIFY_KEY = "worldline.approvals.notify";

/** The /approvals page: the live queue across sessions, its history and the rules. */
export function ApprovalsView() {
  const pending = usePendingApprovals();
  const [tab, setTab] = useState<Tab>("pending");
  const notify = useNotifications();

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
        {notify.supported ? (
          <label className="ml-auto flex items-center gap-1 text-xs text-muted">
            <input
              type="checkbox"
              checked={notify.enabled}
              onChange={(event) => void notify.setEnabled(event.target.checked)}
              data-testid="approvals-notify"
            />
            Notify me
          </label>
        ) : null}
      </header>
      {tab === "pending" ? (
        <>
          <p className="hidden flex-wrap gap-3 text-xs text-muted sm:flex" data-testid="approvals-shortcuts">
            {SHORTCUTS.map((shortcut) => (
              <span key={shortcut.key}>
                <kbd className="rounded border border-border px-1 font-mono">{shortcut.key}</kbd> {shortcut.label}
              </span>
            ))}
          </p>
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

/** Optional browser notifications for new requests while the tab is hidden; the choice stays in this browser. */
function useNotifications() {
  const [enabled, setEnabledState] = useState(false);
  const supported = typeof window !== "undefined" && "Notification" in window;

  useEffect(() => {
    setEnabledState(supported && localStorage.getItem(NOTIFY_KEY) === "1" && Notification.permission === "granted");
  }, [supported]);

  useEffect(() => {
    if (!enabled) return;
    return onNewRequest((approval) => {
      if (!document.hidden) return;
      new Notification(`Approval needed · ${approval.session_title}`, {
        body: approval.description,
        tag: approval.approval_id,
      });
    });
  }, [enabled]);

  const setEnabled = async (value: boolean) => {
    if (value && Notification.permission !== "granted" && (await Notification.requestPermission()) !== "granted")
      return;
    localStorage.setItem(NOTIFY_KEY, value ? "1" : "0");
    setEnabledState(value);
  };
  return { supported, enabled, setEnabled };
}
