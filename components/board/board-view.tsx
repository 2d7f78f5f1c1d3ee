"use client";

import { useMemo, useState } from "react";
import type { BoardCard as Card, SessionState } from "@/server/protocol";
import { usePendingApprovals } from "@/components/shared/approvals-store";
import { ArchiveDialog } from "./archive-dialog";
import { BoardCard, type CardDialog } from "./board-card";
import { PRIMARY } from "./buttons";
import { NewAgentDialog } from "./new-agent-dialog";
import { CommitDialog, MergeDialog, PushDialog } from "./ship-dialogs";
import { useBoard } from "./use-board";

const COLUMNS: { state: SessionState; label: string }[] = [
  { state: "running", label: "Running" },
  { state: "needs_you", label: "Needs you" },
  { state: "review", label: "Review" },
  { state: "failed", label: "Failed" },
  { state: "idle", label: "Idle" },
];
const ARCHIVED_COLUMN = { state: "archived" as const, label: "Archived" };

/**
 * `/board`: every session of the deployment, grouped by repository (or folder), in columns by
 * state, live from the bridge's board feed. On a phone the columns stack.
 */
export function BoardView() {
  const [showArchived, setShowArchived] = useState(false);
  const [creating, setCreating] = useState(false);
  const [dialog, setDialog] = useState<{ kind: CardDialog; card: Card } | null>(null);
  const board = useBoard(showArchived);
  const cards = useWithPendingApprovals(board.cards);
  const groups = useMemo(() => groupCards(cards, showArchived), [cards, showArchived]);
  const columns = showArchived ? [...COLUMNS, ARCHIVED_COLUMN] : COLUMNS;
  // The dialog follows its card as the feed updates it; a card that left the board keeps its last state.
  const dialogCard = dialog ? (cards.find((card) => card.id === dialog.card.id) ?? dialog.card) : null;
  const closeDialog = () => {
    setDialog(null);
    board.reload();
  };

  return (
    <div className="flex flex-col gap-4 p-3 sm:p-4" data-testid="board-page">
      <header className="flex flex-wrap items-center gap-3">
        <h1 className="text-base font-semibold">Board</h1>
        <p className="text-xs text-muted" role="status" data-testid="board-summary">
          {summary(cards)}
        </p>
        <label className="ml-auto flex items-center gap-2 text-xs max-md:min-h-[44px]">
          <input
            type="checkbox"
            role="switch"
            checked={showArchived}
            onChange={(event) => setShowArchived(event.target.checked)}
            data-testid="board-show-archived"
          />
          Show archived
        </label>
        <button type="button" className={PRIMARY} onClick={() => setCreating(true)} data-testid="new-agent">
          New agent
        </button>
      </header>
      {board.error ? (
        <p role="alert" className="text-danger" data-testid="board-error">
          {board.error}
        </p>
      ) : null}
      {board.loaded && groups.length === 0 ? (
        <p className="text-muted" data-testid="board-empty">
          No sessions yet. Start one with “New agent”.
        </p>
      ) : null}
      {groups.map(([group, items], groupIndex) => (
        <section
          key={group}
          aria-label={group}
          className="flex flex-col gap-2"
          data-testid="board-group"
          data-group={group}
        >
          <h2 className="flex min-w-0 items-baseline gap-2">
            <span className="font-semibold">{baseName(group)}</span>
            <span className="truncate font-mono text-xs text-muted">{group}</span>
          </h2>
          <div className="grid grid-cols-1 gap-3 md:auto-cols-[minmax(14rem,1fr)] md:grid-flow-col md:overflow-x-auto">
            {columns.map((column) => {
              const inColumn = items.filter((card) => card.state === column.state);
              const headingId = `col-${groupIndex}-${column.state}`;
              return (
                <section
                  key={column.state}
                  aria-labelledby={headingId}
                  className={`flex min-w-0 flex-col gap-2 rounded-md bg-raised/40 p-2 ${inColumn.length ? "" : "max-md:hidden"}`}
                  data-testid={`column-${column.state}`}
                >
                  <h3 id={headingId} className="text-xs font-semibold uppercase tracking-wider text-muted">
                    {column.label} <span className="font-normal">{inColumn.length}</span>
                  </h3>
                  <ul className="flex flex-col gap-2">
                    {inColumn.map((card) => (
                      <li key={card.id}>
                        <BoardCard
                          card={card}
                          onDialog={(kind) => setDialog({ kind, card })}
                          onChanged={board.reload}
                        />
                      </li>
                    ))}
                  </ul>
                </section>
              );
            })}
          </div>
        </section>
      ))}
      {dialogCard && dialog ? <CardDialogs kind={dialog.kind} card={dialogCard} onClose={closeDialog} /> : null}
      <NewAgentDialog open={creating} onClose={() => setCreating(false)} />
    </div>
  );
}

function CardDialogs({ kind, card, onClose }: { kind: CardDialog; card: Card; onClose: () => void }) {
  const props = { card, open: true, onClose };
  if (kind === "commit") return <CommitDialog {...props} />;
  if (kind === "merge") return <MergeDialog {...props} />;
  if (kind === "push") return <PushDialog {...props} />;
  return <ArchiveDialog {...props} />;
}

/**
 * A card's waiting approval, from the approvals queue when the card does not carry it yet (a card
 * from the session list knows none): the request can be decided on the card either way.
 */
function useWithPendingApprovals(cards: Card[]): Card[] {
  const pending = usePendingApprovals();
  return useMemo(() => {
    const bySession = new Map(pending.map((approval) => [approval.session_id, approval]));
    return cards.map((card) => {
      const waiting = bySession.get(card.id);
      if (card.approval || !waiting) return card;
      const approval = {
        approval_id: waiting.approval_id,
        tool: waiting.tool,
        description: waiting.description,
        risk_level: waiting.risk_level,
      };
      return { ...card, approval, state: card.state === "running" ? "needs_you" : card.state };
    });
  }, [cards, pending]);
}

function groupCards(cards: Card[], showArchived: boolean): [string, Card[]][] {
  const groups = new Map<string, Card[]>();
  const newestFirst = [...cards].sort((a, b) => b.updated_at.localeCompare(a.updated_at));
  for (const card of newestFirst) {
    if (card.state === "archived" && !showArchived) continue;
    groups.set(card.group, [...(groups.get(card.group) ?? []), card]);
  }
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b));
}

function summary(cards: Card[]): string {
  const count = (state: SessionState) => cards.filter((card) => card.state === state).length;
  const parts = [
    [count("running"), "running"],
    [count("needs_you"), "need you"],
    [count("review"), "to review"],
    [count("failed"), "failed"],
  ] as const;
  const said = parts.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
  return said.length ? said.join(", ") : "Nothing running";
}

function baseName(path: string): string {
  return (
    path
      .replace(/[/\\]+$/, "")
      .split(/[/\\]/)
      .pop() || path
  );
}
