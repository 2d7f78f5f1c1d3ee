"use client";

import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef } from "react";
import type { TranscriptItem, TranscriptState } from "@/server/protocol";
import { InterruptedTurn, TurnFooter, UserImages } from "./transcript-extras";
import { Markdown } from "@/components/shared/markdown";
import { HookRow } from "./hook-row";
import { ToolCard } from "./tool-card";
import { PlanCard } from "@/components/review/plan-mode";
import { RewindControl, RewindUndo } from "@/components/review/rewind-control";

/** Rows are measured after render; this guess only sets the initial scroll height. */
const ESTIMATED_ROW_PX = 64;
/** Within this distance of the bottom the view follows new output; further up it stays put. */
const FOLLOW_THRESHOLD_PX = 80;

type ToolItem = Extract<TranscriptItem, { kind: "tool" }>;

/**
 * The conversation, virtualized: only the rows in view are in the DOM, so a
 * session of thousands of events opens and scrolls smoothly.
 */
export function Transcript({
  state,
  onOpenDiff,
  sessionId,
}: {
  state: TranscriptState;
  onOpenDiff?: (title: string, diff: string) => void;
  sessionId?: string;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  const { rows, children } = useMemo(() => groupSubagents(state.items), [state.items]);
  const turnEnds = useMemo(() => lastAnswers(state.items), [state.items]);

  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ESTIMATED_ROW_PX,
    overscan: 6,
    getItemKey: (index) => `${rows[index].kind}-${rows[index].id}`,
  });

  const last = rows.at(-1);
  const lastSize =
    last?.kind === "assistant"
      ? last.text.length + last.reasoning.length
      : last?.kind === "tool"
        ? (last.output?.length ?? 0) + last.progress.length
        : 0;
  useEffect(() => {
    if (following.current && rows.length > 0) virtualizer.scrollToIndex(rows.length - 1, { align: "end" });
  }, [rows.length, lastSize, virtualizer]);

  const onScroll = () => {
    const el = scroller.current;
    if (el) following.current = el.scrollHeight - el.scrollTop - el.clientHeight < FOLLOW_THRESHOLD_PX;
  };

  return (
    <div
      ref={scroller}
      onScroll={onScroll}
      className="min-h-0 flex-1 overflow-y-auto [overflow-anchor:none]"
      // Focusable, so a keyboard can scroll and read it; news is spoken by the session's Announcer, not here.
      role="region"
      aria-label="Conversation"
      tabIndex={0}
      data-testid="transcript"
      data-count={rows.length}
    >
      {rows.length === 0 ? (
        <p className="px-4 py-16 text-center text-muted" data-testid="transcript-empty">
          Ask the agent to read, change or run something in this folder.
          <br />
          <span className="text-xs">
            Type <kbd>@</kbd> to mention a file, <kbd>/</kbd> for commands.
          </span>
        </p>
      ) : null}
      <div className="relative mx-auto w-full max-w-3xl" style={{ height: virtualizer.getTotalSize() }}>
        {virtualizer.getVirtualItems().map((row) => {
          const item = rows[row.index];
          return (
            <div
              key={row.key}
              data-index={row.index}
              ref={virtualizer.measureElement}
              className="absolute left-0 top-0 w-full px-4 py-1.5"
              style={{ transform: `translateY(${row.start}px)` }}
            >
              <Item
                item={item}
                state={state}
                childrenOf={children}
                onOpenDiff={onOpenDiff}
                sessionId={sessionId}
                isLastOfTurn={turnEnds.has(item.id)}
              />
            </div>
          );
        })}
      </div>
    </div>
  );
}

/** Subagent tool calls (with parentToolCallId) render inside their parent's card instead of as rows. */
function groupSubagents(items: TranscriptItem[]): { rows: TranscriptItem[]; children: Map<string, ToolItem[]> } {
  const children = new Map<string, ToolItem[]>();
  const rows: TranscriptItem[] = [];
  for (const item of items) {
    if (item.kind === "tool" && item.parentToolCallId) {
      const list = children.get(item.parentToolCallId) ?? [];
      list.push(item);
      children.set(item.parentToolCallId, list);
    } else rows.push(item);
  }
  return { rows, children };
}

/** The last answer of each turn: its footer shows the turn's tokens, cache hits and cost. */
function lastAnswers(items: TranscriptItem[]): Set<string> {
  const last = new Map<string, string>();
  for (const item of items) if (item.kind === "assistant") last.set(item.turnId, item.id);
  return new Set(last.values());
}

function Item({
  item,
  state,
  childrenOf,
  onOpenDiff,
  sessionId,
  isLastOfTurn,
}: {
  item: TranscriptItem;
  state: TranscriptState;
  childrenOf: Map<string, ToolItem[]>;
  onOpenDiff?: (title: string, diff: string) => void;
  sessionId?: string;
  isLastOfTurn?: boolean;
}) {
  switch (item.kind) {
    case "user":
      return (
        <div className="group flex flex-col items-end gap-0.5">
          <div
            className="ml-auto w-fit max-w-[85%] whitespace-pre-wrap rounded-md bg-raised px-3 py-2"
            data-testid="message-user"
          >
            {item.images?.length ? <UserImages images={item.images} /> : null}
            {item.text}
          </div>
          {sessionId ? <RewindControl item={item} state={state} sessionId={sessionId} /> : null}
        </div>
      );
    case "interrupted":
      return <InterruptedTurn item={item} sessionId={sessionId} running={state.running !== null} />;
    case "assistant":
      return (
        <div className="flex flex-col gap-1" data-testid="message-assistant">
          {item.reasoning ? (
            <details className="text-muted" open={!item.done && !item.text}>
              <summary className="cursor-pointer select-none text-xs" data-testid="reasoning-toggle">
                {item.done || item.text ? "Thought" : "Thinking…"} · {item.reasoning.length} chars
              </summary>
              <div
                className="mt-1 whitespace-pre-wrap border-l border-border pl-3 text-xs"
                data-testid="message-reasoning"
              >
                {item.reasoning}
              </div>
            </details>
          ) : null}
          {item.text ? (
            <div data-testid="message-text">
              <Markdown text={item.text} />
            </div>
          ) : null}
          {!item.done && !item.text && !item.reasoning ? <span className="text-muted">…</span> : null}
          {item.done && isLastOfTurn ? <TurnFooter stats={state.turnStats?.[item.turnId]} /> : null}
        </div>
      );
    case "tool": {
      if (item.name === "propose_plan" && item.display?.plan)
        return (
          <PlanCard
            item={item}
            sessionId={sessionId}
            planMode={state.mode === "plan"}
            latest={latestPlanId(state.items) === item.id}
            running={state.running !== null}
          />
        );
      const nested = renderChildren(item.id, state, childrenOf, onOpenDiff);
      return (
        <ToolCard
          item={item}
          approval={item.approvalId ? state.approvals[item.approvalId] : undefined}
          nested={nested}
          onOpenDiff={onOpenDiff}
        />
      );
    }
    case "notice":
      return (
        // No role="alert": the list is virtualized, so a row scrolled back into view would be read again.
        <div
          className={`rounded-md border px-3 py-2 ${item.level === "error" ? "border-danger/40 bg-danger/10 text-danger" : item.level === "warning" ? "border-warn/40 bg-warn/10 text-warn" : "border-border text-muted"}`}
          data-testid="notice"
          data-level={item.level}
        >
          {item.text}
          {sessionId && item.id.startsWith("rewind-") && latestRewindNotice(state.items) === item.id ? (
            <RewindUndo sessionId={sessionId} running={state.running !== null} />
          ) : null}
        </div>
      );
    case "hook":
      return <HookRow item={item} />;
    case "retry":
      return (
        <div className="text-xs text-warn" data-testid="retry-notice">
          ↻ Retrying (attempt {item.attempt}) in {Math.round(item.delayMs / 100) / 10}s: {item.message}
        </div>
      );
    case "queued":
      return (
        <div
          className="ml-auto w-fit max-w-[85%] whitespace-pre-wrap rounded-md border border-dashed border-border px-3 py-2 text-muted"
          data-testid="message-queued"
        >
          <span className="mr-2 text-xs">queued #{item.position}</span>
          {item.text}
        </div>
      );
    case "compaction":
      return (
        <div className="text-center text-xs text-muted" data-testid="compaction">
          — context compaction ({item.reason}): {item.state}
          {item.tokensAfter !== undefined ? `, ${item.tokensBefore} → ${item.tokensAfter} tokens` : ""}
          {item.message ? ` · ${item.message}` : ""} —
        </div>
      );
    default:
      return null;
  }
}

function latestRewindNotice(items: TranscriptItem[]): string | undefined {
  return items.findLast((item) => item.kind === "notice" && item.id.startsWith("rewind-"))?.id;
}

function latestPlanId(items: TranscriptItem[]): string | undefined {
  return items.findLast((item) => item.kind === "tool" && item.name === "propose_plan")?.id;
}

function renderChildren(
  parentId: string,
  state: TranscriptState,
  childrenOf: Map<string, ToolItem[]>,
  onOpenDiff?: (title: string, diff: string) => void,
) {
  const kids = childrenOf.get(parentId);
  if (!kids?.length) return undefined;
  return kids.map((kid) => (
    <ToolCard
      key={kid.id}
      item={kid}
      approval={kid.approvalId ? state.approvals[kid.approvalId] : undefined}
      nested={renderChildren(kid.id, state, childrenOf, onOpenDiff)}
      onOpenDiff={onOpenDiff}
    />
  ));
}
