"use client";

import { useState } from "react";
import { SessionSummary, type TranscriptItem } from "@/server/protocol";
import { Markdown } from "@/components/shared/markdown";
import { api, command } from "@/components/transport/client";
import { canDrive, owns, useAccess } from "@/components/shared/use-access";

type ToolItem = Extract<TranscriptItem, { kind: "tool" }>;

/** What "Approve plan" sends: the agent leaves plan mode and carries the plan out. */
const APPROVED_PROMPT = "The plan is approved. Carry it out.";

/** Switches plan mode over the HTTP API; every tab follows through `session.updated`. */
export async function setPlanMode(sessionId: string, on: boolean): Promise<void> {
  await api(`/api/v1/sessions/${encodeURIComponent(sessionId)}`, SessionSummary, {
    method: "PATCH",
    body: { mode: on ? "plan" : "default" },
  });
}

/** The input's plan-mode switch (also Shift+Tab in the input and `/plan`): the session's owner's. */
export function PlanModeToggle({ sessionId, on }: { sessionId: string; on: boolean }) {
  const access = useAccess(sessionId);
  if (!owns(access)) return null;
  return (
    <button
      type="button"
      className={on ? "rounded bg-accent/20 px-1.5 text-accent" : "hover:text-fg"}
      onClick={() => void setPlanMode(sessionId, !on)}
      data-testid="plan-toggle"
      aria-pressed={on}
      title="Plan mode: the agent reads and proposes a plan before changing anything (Shift+Tab)"
    >
      Plan <kbd className="hidden sm:inline">⇧Tab</kbd>
    </button>
  );
}

/**
 * A `propose_plan` call as a card: the plan, "Approve plan" (leaves plan mode and asks the
 * agent to carry it out) and "Keep planning" (stays in plan mode; the input takes the feedback).
 * The buttons show while the session is still in plan mode and this is the latest plan, to a page
 * that may act on them: approving changes the session's mode (its owner); planning on needs the prompt.
 */
export function PlanCard({
  item,
  sessionId,
  planMode,
  latest,
  running,
}: {
  item: ToolItem;
  sessionId?: string;
  planMode: boolean;
  latest: boolean;
  running: boolean;
}) {
  const [keepPlanning, setKeepPlanning] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const access = useAccess(sessionId);
  const plan =
    (item.display?.plan as string | undefined) ?? ((item.args as { plan?: unknown })?.plan as string | undefined);
  if (!plan) return null;
  const undecided = planMode && latest && !keepPlanning && item.state === "completed";

  const approve = async () => {
    if (!sessionId) return;
    setError(null);
    try {
      await setPlanMode(sessionId, false);
      await command("turn.prompt", { sessionId, text: APPROVED_PROMPT });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  const keep = () => {
    setKeepPlanning(true);
    document.querySelector<HTMLTextAreaElement>("[data-testid=prompt-input]")?.focus();
  };

  return (
    <section
      className="rounded-md border border-accent/50 bg-panel text-sm"
      data-testid="plan-card"
      aria-label="Proposed plan"
    >
      <header className="flex items-center gap-2 border-b border-border px-3 py-1.5 text-xs">
        <span className="font-semibold text-accent">Plan</span>
        <span className="text-muted">
          {undecided
            ? "The agent proposes this plan and waits for you."
            : planMode
              ? "Still planning: tell the agent what to change."
              : "Approved."}
        </span>
      </header>
      <div className="max-h-96 overflow-auto px-3 py-2" data-testid="plan-text">
        <Markdown text={plan} />
      </div>
      {undecided && canDrive(access) ? (
        <div className="flex flex-wrap gap-2 border-t border-border px-3 py-2">
          {owns(access) ? (
            <button
              type="button"
              className="min-h-9 flex-1 rounded bg-accent px-3 py-1.5 font-medium text-bg disabled:opacity-50 sm:flex-none"
              onClick={() => void approve()}
              disabled={running}
              data-testid="plan-approve"
            >
              Approve plan
            </button>
          ) : null}
          <button
            type="button"
            className="min-h-9 flex-1 rounded border border-border px-3 py-1.5 hover:bg-raised sm:flex-none"
            onClick={keep}
            data-testid="plan-keep"
          >
            Keep planning
          </button>
        </div>
      ) : null}
      {error ? <div className="px-3 pb-2 text-xs text-danger">{error}</div> : null}
    </section>
  );
}
