import type { EventEnvelope, GenerationStats, ToolState, TurnStage } from "./events";
import type { UserImageRef } from "./images";
import { addUsage, type SessionUsageTotals } from "./usage";

/**
 * The view of a session that every tab derives from its event log. Pure and
 * shared: the UI folds live events into it, and the bridge can fold a long log
 * into a snapshot for a late tab.
 */
export type TranscriptItem =
  | { kind: "user"; id: string; turnId: string; text: string; images?: UserImageRef[] }
  | { kind: "assistant"; id: string; turnId: string; text: string; reasoning: string; done: boolean }
  | {
      kind: "tool";
      id: string;
      turnId: string;
      name: string;
      args: unknown;
      state: ToolState;
      output?: string;
      isError?: boolean;
      progress: string;
      display?: Record<string, unknown>;
      approvalId?: string;
      /** How its approval request ended (approved, rejected, interrupted, cancelled); absent while pending. */
      approvalStatus?: string;
      parentToolCallId?: string;
    }
  | { kind: "notice"; id: string; level: "info" | "warning" | "error"; text: string; turnId?: string }
  | { kind: "retry"; id: string; turnId: string; attempt: number; delayMs: number; message: string }
  | { kind: "queued"; id: string; turnId: string; text: string; position: number }
  /** A turn the bridge's restart cut off; `resumable` until another turn starts. */
  | { kind: "interrupted"; id: string; turnId: string; resumable: boolean }
  | {
      kind: "compaction";
      id: string;
      turnId: string;
      reason: "auto" | "manual";
      state: "running" | "completed" | "skipped" | "cancelled" | "error";
      tokensBefore: number;
      tokensAfter?: number;
      message?: string;
    };

export interface PendingApproval {
  approvalId: string;
  toolCallId: string;
  tool: string;
  args: unknown;
  description: string;
  riskLevel: string;
  diff?: string;
  kind: "tool" | "password";
  scope?: string;
}

export interface TranscriptState {
  lastSeq: number;
  title?: string;
  yolo?: boolean;
  model?: string | null;
  /** Plan mode (session.updated `mode`). */
  mode?: "default" | "plan";
  /** Turn number by turn id (from turn.started), to find a message's checkpoints. */
  turnNumbers?: Record<string, number>;
  /** Counts review actions (accept/revert in the Changes view), so views refresh in every tab. */
  reviewVersion?: number;
  items: TranscriptItem[];
  /** The running turn, if any. */
  running: { turnId: string; stage: TurnStage } | null;
  lastStats?: GenerationStats;
  /** Each finished turn's stats (the turn footer), by turn id. */
  turnStats?: Record<string, GenerationStats>;
  /** The session's totals over its turns: prompt tokens, the cached part and cost (null while unknown). */
  usage?: SessionUsageTotals;
  approvals: Record<string, PendingApproval>;
  context?: { tokens: number; window: number };
  todos: { title: string; status: string }[];
  terminals: Record<string, { title: string }>;
  /**
   * The items as they stood when each checkpoint was taken (shared arrays, so cheap):
   * a conversation rewind shows exactly the transcript of that moment.
   */
  checkpointViews?: Record<string, TranscriptItem[]>;
}

export function emptyTranscript(): TranscriptState {
  return { lastSeq: 0, items: [], running: null, approvals: {}, todos: [], terminals: {} };
}

/** Folds one event into the state. Events at or below lastSeq are ignored (idempotent). */
export function applyEvent(state: TranscriptState, event: EventEnvelope): TranscriptState {
  if (event.seq <= state.lastSeq) return state;
  const next: TranscriptState = { ...state, lastSeq: event.seq };
  switch (event.type) {
    case "session.updated": {
      const { title, yolo, model, mode } = event.payload;
      if (mode !== undefined) next.mode = mode;
      if (title !== undefined) next.title = title;
      if (yolo !== undefined) next.yolo = yolo;
      if (model !== undefined) next.model = model;
      return next;
    }
    case "turn.started":
      next.running = { turnId: event.payload.turnId, stage: "planning" };
      next.turnNumbers = { ...state.turnNumbers, [event.payload.turnId]: event.payload.number };
      // A queued prompt that starts now leaves the queue; an interrupted turn is no longer offered for resuming.
      next.items = next.items
        .filter((item) => !(item.kind === "queued" && item.turnId === event.payload.turnId))
        .map((item) => (item.kind === "interrupted" && item.resumable ? { ...item, resumable: false } : item));
      return next;
    case "turn.queued":
      next.items = [
        ...next.items,
        {
          kind: "queued",
          id: `queued-${event.payload.turnId}`,
          turnId: event.payload.turnId,
          text: event.payload.prompt,
          position: event.payload.position,
        },
      ];
      return next;
    case "compaction.started":
      next.items = [
        ...next.items,
        {
          kind: "compaction",
          id: `compaction-${event.seq}`,
          turnId: event.payload.turnId,
          reason: event.payload.reason,
          state: "running",
          tokensBefore: event.payload.tokens,
        },
      ];
      return next;
    case "compaction.completed": {
      const index = findLastIndex(
        next.items,
        (item) => item.kind === "compaction" && item.turnId === event.payload.turnId && item.state === "running",
      );
      if (index === -1) return next;
      const item = next.items[index] as Extract<TranscriptItem, { kind: "compaction" }>;
      next.items = replaceAt(next.items, index, {
        ...item,
        state: event.payload.outcome,
        tokensAfter: event.payload.tokensAfter,
        message: event.payload.message,
      });
      return next;
    }
    case "turn.stage":
      if (next.running?.turnId === event.payload.turnId) next.running = { ...next.running, stage: event.payload.stage };
      return next;
    case "turn.completed":
      next.running = null;
      if (event.payload.stats) {
        const stats = event.payload.stats;
        next.lastStats = stats;
        next.turnStats = { ...next.turnStats, [event.payload.turnId]: stats };
        next.usage = addUsage(next.usage, stats);
      }
      next.items = next.items.map((item) =>
        item.kind === "assistant" && item.turnId === event.payload.turnId && !item.done
          ? { ...item, done: true }
          : item,
      );
      if (event.payload.outcome === "interrupted") {
        next.items = [
          ...next.items,
          {
            kind: "interrupted",
            id: `interrupted-${event.payload.turnId}`,
            turnId: event.payload.turnId,
            resumable: true,
          },
        ];
      }
      return next;
    case "turn.retry":
      next.items = [
        ...next.items,
        { kind: "retry", id: `retry-${event.seq}`, turnId: event.payload.turnId, ...pick(event.payload) },
      ];
      return next;
    case "turn.error":
      next.items = [
        ...next.items,
        {
          kind: "notice",
          id: `error-${event.seq}`,
          level: "error",
          text: event.payload.message,
          turnId: event.payload.turnId,
        },
      ];
      return next;
    case "notice":
      next.items = [...next.items, { kind: "notice", id: `notice-${event.seq}`, ...event.payload }];
      return next;
    case "message.user":
      next.items = [
        ...next.items,
        {
          kind: "user",
          id: event.payload.messageId,
          turnId: event.payload.turnId,
          text: event.payload.text,
          ...(event.payload.images?.length ? { images: event.payload.images } : {}),
        },
      ];
      return next;
    case "message.part.delta": {
      const { messageId, turnId, part, delta } = event.payload;
      const index = findLastIndex(next.items, (item) => item.kind === "assistant" && item.id === messageId);
      if (index === -1) {
        next.items = [
          ...next.items,
          {
            kind: "assistant",
            id: messageId,
            turnId,
            text: part === "text" ? delta : "",
            reasoning: part === "reasoning" ? delta : "",
            done: false,
          },
        ];
        return next;
      }
      const item = next.items[index] as Extract<TranscriptItem, { kind: "assistant" }>;
      next.items = replaceAt(next.items, index, {
        ...item,
        text: part === "text" ? item.text + delta : item.text,
        reasoning: part === "reasoning" ? item.reasoning + delta : item.reasoning,
      });
      return next;
    }
    case "message.completed": {
      const index = findLastIndex(
        next.items,
        (item) => item.kind === "assistant" && item.id === event.payload.messageId,
      );
      if (index !== -1) {
        const item = next.items[index] as Extract<TranscriptItem, { kind: "assistant" }>;
        next.items = replaceAt(next.items, index, { ...item, done: true });
      }
      return next;
    }
    case "tool.call":
      next.items = [
        ...next.items,
        {
          kind: "tool",
          id: event.payload.toolCallId,
          turnId: event.payload.turnId,
          name: event.payload.name,
          args: event.payload.args,
          state: "pending",
          progress: "",
          parentToolCallId: event.payload.parentToolCallId,
        },
      ];
      return next;
    case "tool.progress":
      return updateTool(next, event.payload.toolCallId, (tool) => ({
        ...tool,
        progress: tool.progress + event.payload.text,
      }));
    case "tool.state": {
      const { state: toolState, output, isError, display, name, args } = event.payload;
      return updateTool(next, event.payload.toolCallId, (tool) => ({
        ...tool,
        state: toolState,
        output,
        isError,
        display,
        ...(name !== undefined ? { name } : {}),
        ...(args !== undefined ? { args } : {}),
      }));
    }
    case "approval.requested": {
      const { turnId: _turnId, ...approval } = event.payload;
      next.approvals = { ...next.approvals, [approval.approvalId]: approval };
      return updateTool(next, approval.toolCallId, (tool) => ({
        ...tool,
        state: "waiting_approval",
        approvalId: approval.approvalId,
      }));
    }
    case "approval.decided": {
      const { [event.payload.approvalId]: decided, ...rest } = next.approvals;
      next.approvals = rest;
      const toolCallId = event.payload.toolCallId ?? decided?.toolCallId;
      if (!toolCallId) return next;
      // A request that died with its turn leaves no tool result behind; the card shows why.
      const ended = event.payload.status === "interrupted" || event.payload.status === "cancelled";
      return updateTool(next, toolCallId, (tool) => ({
        ...tool,
        approvalStatus: event.payload.status,
        state: ended && tool.state === "waiting_approval" ? "error" : tool.state,
      }));
      return next;
    }
    case "context.usage":
      next.context = { tokens: event.payload.tokens, window: event.payload.window };
      return next;
    case "todo.updated":
      next.todos = event.payload.items;
      return next;
    case "review.updated":
      next.reviewVersion = (state.reviewVersion ?? 0) + 1;
      return next;
    case "terminal.opened":
    case "terminal.renamed":
      next.terminals = { ...next.terminals, [event.payload.terminalId]: { title: event.payload.title } };
      return next;
    case "terminal.closed": {
      const { [event.payload.terminalId]: _closed, ...rest } = next.terminals;
      next.terminals = rest;
      return next;
    }
    case "memory.policy_decision":
      return next;
    case "memory.stored":
      next.items = [
        ...next.items,
        {
          kind: "notice",
          id: `memory-${event.seq}`,
          level: "info",
          text: `Remembered (${event.payload.type}, ${event.payload.scope}): ${event.payload.text}`,
          turnId: event.payload.turnId,
        },
      ];
      return next;
    case "reflection.completed":
      if (event.payload.outcome !== "stored" || !event.payload.lesson) return next;
      next.items = [
        ...next.items,
        {
          kind: "notice",
          id: `reflection-${event.seq}`,
          level: "info",
          text: `Lesson learned: ${event.payload.lesson}`,
          turnId: event.payload.turnId,
        },
      ];
      return next;
    case "checkpoint.created":
      next.checkpointViews = { ...next.checkpointViews, [event.payload.checkpointId]: next.items };
      return next;
    case "checkpoint.rewound": {
      const { conversation, files, number, undo } = event.payload;
      const view = conversation ? next.checkpointViews?.[event.payload.checkpointId] : undefined;
      if (view) next.items = view;
      const what = conversation && files ? "conversation and files" : conversation ? "conversation" : "files";
      const text = undo ? `Undid the last rewind (${what}).` : `Rewound the ${what} to checkpoint #${number}.`;
      next.items = [...next.items, { kind: "notice", id: `rewind-${event.seq}`, level: "info", text }];
      return next;
    }
  }
}

export function applyEvents(state: TranscriptState, events: readonly EventEnvelope[]): TranscriptState {
  return events.reduce(applyEvent, state);
}

function pick(payload: { attempt: number; delayMs: number; message: string }) {
  return { attempt: payload.attempt, delayMs: payload.delayMs, message: payload.message };
}

function updateTool(
  state: TranscriptState,
  toolCallId: string,
  update: (tool: Extract<TranscriptItem, { kind: "tool" }>) => TranscriptItem,
): TranscriptState {
  const index = findLastIndex(state.items, (item) => item.kind === "tool" && item.id === toolCallId);
  if (index === -1) return state;
  return {
    ...state,
    items: replaceAt(state.items, index, update(state.items[index] as Extract<TranscriptItem, { kind: "tool" }>)),
  };
}

function findLastIndex<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i])) return i;
  return -1;
}

function replaceAt<T>(items: readonly T[], index: number, value: T): T[] {
  const copy = items.slice();
  copy[index] = value;
  return copy;
}
