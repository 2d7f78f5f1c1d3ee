import type { EventEnvelope, EventPayload, EventType, GenerationStats, ToolState, TurnStage } from "./events";
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
  /** A lifecycle hook ran (server/hooks): event, command, exit code and time. */
  | ({ kind: "hook"; id: string } & EventPayload<"hook.ran">)
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
  /** The session's budget in USD as last told (session.updated `budget_usd`); undefined when the log never said. */
  budgetUsd?: number | null;
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
  const reduce = reducers[event.type] as Reducer<EventType>;
  return reduce({ ...state, lastSeq: event.seq }, event);
}

type Envelope<T extends EventType> = { seq: number; type: T; payload: EventPayload<T> };
/** Folds one event of its type into `next`, a shallow copy of the state it may change in place. */
type Reducer<T extends EventType> = (next: TranscriptState, event: Envelope<T>) => TranscriptState;

/** Appends an item to the transcript. */
function append(next: TranscriptState, item: TranscriptItem): TranscriptState {
  next.items = [...next.items, item];
  return next;
}

const sessionReducers = {
  "session.updated": (next, { payload }) => {
    const { title, yolo, model, mode, budget_usd } = payload;
    if (mode !== undefined) next.mode = mode;
    if (budget_usd !== undefined) next.budgetUsd = budget_usd;
    if (title !== undefined) next.title = title;
    if (yolo !== undefined) next.yolo = yolo;
    if (model !== undefined) next.model = model;
    return next;
  },
  "context.usage": (next, { payload }) => {
    next.context = { tokens: payload.tokens, window: payload.window };
    return next;
  },
  "todo.updated": (next, { payload }) => {
    next.todos = payload.items;
    return next;
  },
  "review.updated": (next) => {
    next.reviewVersion = (next.reviewVersion ?? 0) + 1;
    return next;
  },
} satisfies Partial<{ [T in EventType]: Reducer<T> }>;

const turnReducers = {
  "turn.started": (next, { payload }) => {
    next.running = { turnId: payload.turnId, stage: "planning" };
    next.turnNumbers = { ...next.turnNumbers, [payload.turnId]: payload.number };
    // A queued prompt that starts now leaves the queue; an interrupted turn is no longer offered for resuming.
    next.items = next.items
      .filter((item) => !(item.kind === "queued" && item.turnId === payload.turnId))
      .map((item) => (item.kind === "interrupted" && item.resumable ? { ...item, resumable: false } : item));
    return next;
  },
  "turn.queued": (next, { payload }) =>
    append(next, {
      kind: "queued",
      id: `queued-${payload.turnId}`,
      turnId: payload.turnId,
      text: payload.prompt,
      position: payload.position,
    }),
  "turn.stage": (next, { payload }) => {
    if (next.running?.turnId === payload.turnId) next.running = { ...next.running, stage: payload.stage };
    return next;
  },
  "turn.completed": (next, { payload }) => {
    next.running = null;
    if (payload.stats) {
      next.lastStats = payload.stats;
      next.turnStats = { ...next.turnStats, [payload.turnId]: payload.stats };
      next.usage = addUsage(next.usage, payload.stats);
    }
    next.items = next.items.map((item) =>
      item.kind === "assistant" && item.turnId === payload.turnId && !item.done ? { ...item, done: true } : item,
    );
    if (payload.outcome !== "interrupted") return next;
    return append(next, {
      kind: "interrupted",
      id: `interrupted-${payload.turnId}`,
      turnId: payload.turnId,
      resumable: true,
    });
  },
  "turn.retry": (next, { seq, payload }) =>
    append(next, {
      kind: "retry",
      id: `retry-${seq}`,
      turnId: payload.turnId,
      attempt: payload.attempt,
      delayMs: payload.delayMs,
      message: payload.message,
    }),
  "turn.error": (next, { seq, payload }) =>
    append(next, { kind: "notice", id: `error-${seq}`, level: "error", text: payload.message, turnId: payload.turnId }),
  notice: (next, { seq, payload }) => append(next, { kind: "notice", id: `notice-${seq}`, ...payload }),
  "compaction.started": (next, { seq, payload }) =>
    append(next, {
      kind: "compaction",
      id: `compaction-${seq}`,
      turnId: payload.turnId,
      reason: payload.reason,
      state: "running",
      tokensBefore: payload.tokens,
    }),
  "compaction.completed": (next, { payload }) => {
    const index = findLastIndex(
      next.items,
      (item) => item.kind === "compaction" && item.turnId === payload.turnId && item.state === "running",
    );
    if (index === -1) return next;
    const item = next.items[index] as Extract<TranscriptItem, { kind: "compaction" }>;
    next.items = replaceAt(next.items, index, {
      ...item,
      state: payload.outcome,
      tokensAfter: payload.tokensAfter,
      message: payload.message,
    });
    return next;
  },
} satisfies Partial<{ [T in EventType]: Reducer<T> }>;

const messageReducers = {
  "message.user": (next, { payload }) =>
    append(next, {
      kind: "user",
      id: payload.messageId,
      turnId: payload.turnId,
      text: payload.text,
      ...(payload.images?.length ? { images: payload.images } : {}),
    }),
  "message.part.delta": (next, { payload }) => {
    const { messageId, turnId, part, delta } = payload;
    const index = findLastIndex(next.items, (item) => item.kind === "assistant" && item.id === messageId);
    if (index === -1) {
      return append(next, {
        kind: "assistant",
        id: messageId,
        turnId,
        text: part === "text" ? delta : "",
        reasoning: part === "reasoning" ? delta : "",
        done: false,
      });
    }
    const item = next.items[index] as Extract<TranscriptItem, { kind: "assistant" }>;
    next.items = replaceAt(next.items, index, {
      ...item,
      text: part === "text" ? item.text + delta : item.text,
      reasoning: part === "reasoning" ? item.reasoning + delta : item.reasoning,
    });
    return next;
  },
  "message.completed": (next, { payload }) => {
    const index = findLastIndex(next.items, (item) => item.kind === "assistant" && item.id === payload.messageId);
    if (index === -1) return next;
    const item = next.items[index] as Extract<TranscriptItem, { kind: "assistant" }>;
    next.items = replaceAt(next.items, index, { ...item, done: true });
    return next;
  },
} satisfies Partial<{ [T in EventType]: Reducer<T> }>;

const toolReducers = {
  "tool.call": (next, { payload }) =>
    append(next, {
      kind: "tool",
      id: payload.toolCallId,
      turnId: payload.turnId,
      name: payload.name,
      args: payload.args,
      state: "pending",
      progress: "",
      parentToolCallId: payload.parentToolCallId,
    }),
  "tool.progress": (next, { payload }) =>
    updateTool(next, payload.toolCallId, (tool) => ({ ...tool, progress: tool.progress + payload.text })),
  "tool.state": (next, { payload }) => {
    const { state, output, isError, display, name, args } = payload;
    return updateTool(next, payload.toolCallId, (tool) => ({
      ...tool,
      state,
      output,
      isError,
      display,
      ...(name !== undefined ? { name } : {}),
      ...(args !== undefined ? { args } : {}),
    }));
  },
  "approval.requested": (next, { payload }) => {
    const { turnId: _turnId, ...approval } = payload;
    next.approvals = { ...next.approvals, [approval.approvalId]: approval };
    return updateTool(next, approval.toolCallId, (tool) => ({
      ...tool,
      state: "waiting_approval",
      approvalId: approval.approvalId,
    }));
  },
  "approval.decided": (next, { payload }) => {
    const { [payload.approvalId]: decided, ...rest } = next.approvals;
    next.approvals = rest;
    const toolCallId = payload.toolCallId ?? decided?.toolCallId;
    if (!toolCallId) return next;
    // A request that died with its turn leaves no tool result behind; the card shows why.
    const ended = payload.status === "interrupted" || payload.status === "cancelled";
    return updateTool(next, toolCallId, (tool) => ({
      ...tool,
      approvalStatus: payload.status,
      state: ended && tool.state === "waiting_approval" ? "error" : tool.state,
    }));
  },
} satisfies Partial<{ [T in EventType]: Reducer<T> }>;

const terminalReducers = {
  "terminal.opened": (next, { payload }) => nameTerminal(next, payload.terminalId, payload.title),
  "terminal.renamed": (next, { payload }) => nameTerminal(next, payload.terminalId, payload.title),
  "terminal.closed": (next, { payload }) => {
    const { [payload.terminalId]: _closed, ...rest } = next.terminals;
    next.terminals = rest;
    return next;
  },
} satisfies Partial<{ [T in EventType]: Reducer<T> }>;

const memoryReducers = {
  "memory.policy_decision": (next) => next,
  "memory.stored": (next, { seq, payload }) =>
    append(next, {
      kind: "notice",
      id: `memory-${seq}`,
      level: "info",
      text: `Remembered (${payload.type}, ${payload.scope}): ${payload.text}`,
      turnId: payload.turnId,
    }),
  "reflection.completed": (next, { seq, payload }) => {
    if (payload.outcome !== "stored" || !payload.lesson) return next;
    return append(next, {
      kind: "notice",
      id: `reflection-${seq}`,
      level: "info",
      text: `Lesson learned: ${payload.lesson}`,
      turnId: payload.turnId,
    });
  },
} satisfies Partial<{ [T in EventType]: Reducer<T> }>;

const hookReducers = {
  "hook.ran": (next, { seq, payload }) => append(next, { kind: "hook", id: `hook-${seq}`, ...payload }),
} satisfies Partial<{ [T in EventType]: Reducer<T> }>;

const checkpointReducers = {
  "checkpoint.created": (next, { payload }) => {
    next.checkpointViews = { ...next.checkpointViews, [payload.checkpointId]: next.items };
    return next;
  },
  "checkpoint.rewound": (next, { seq, payload }) => {
    const { conversation, files, number, undo } = payload;
    const view = conversation ? next.checkpointViews?.[payload.checkpointId] : undefined;
    if (view) next.items = view;
    const what = conversation && files ? "conversation and files" : conversation ? "conversation" : "files";
    const text = undo ? `Undid the last rewind (${what}).` : `Rewound the ${what} to checkpoint #${number}.`;
    return append(next, { kind: "notice", id: `rewind-${seq}`, level: "info", text });
  },
} satisfies Partial<{ [T in EventType]: Reducer<T> }>;

/** One reducer per event type, grouped by what the event is about; the type checks that none is missing. */
const reducers: { [T in EventType]: Reducer<T> } = {
  ...sessionReducers,
  ...turnReducers,
  ...messageReducers,
  ...toolReducers,
  ...hookReducers,
  ...terminalReducers,
  ...memoryReducers,
  ...checkpointReducers,
};

export function applyEvents(state: TranscriptState, events: readonly EventEnvelope[]): TranscriptState {
  return events.reduce(applyEvent, state);
}

function nameTerminal(next: TranscriptState, terminalId: string, title: string): TranscriptState {
  next.terminals = { ...next.terminals, [terminalId]: { title } };
  return next;
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
