import { errorMessage } from "../errors";
import { type PositionedRecord, recordTokens, summaryMessage } from "./context";
import type { ChatMessage } from "./provider";
import { streamStep } from "./stream-step";
import type { TurnEmitter } from "./turn-emitter";
import type { TurnRun } from "./turn-run";

/** Compact when the context passes this share of the model's window: room is left for the next answer. */
export const DEFAULT_COMPACTION_THRESHOLD = 0.85;

/** The recent part kept verbatim may fill up to this share of the window. */
const RECENT_SHARE = 0.25;

/** Each older message is cut to this many characters in the summariser's input, so one huge tool output can't crowd out the rest. */
const SUMMARY_INPUT_CHARS_PER_MESSAGE = 4_000;

const SUMMARY_SYSTEM_PROMPT = [
  "You compact the history of a coding agent's conversation so the agent can continue the work with less context.",
  "Write a dense summary that keeps: the user's goals and constraints; decisions made and why; files read, created or changed (with paths) and what changed;",
  "commands run and their important results; errors met and how they were solved; open questions; and what was being done right now and the next steps.",
  "Keep exact identifiers, paths, names and numbers. Do not invent anything. Write in the second person to the agent. No preamble.",
].join(" ");

/** What compaction reads of the turn it runs in. */
type CompactionRun = Pick<TurnRun, "provider" | "model" | "context" | "signal" | "emit" | "retry" | "contextWindow">;

interface CompactionRequest {
  reason: "auto" | "manual";
  focus?: string;
  /** Writes the checkpoint taken before anything is replaced. */
  checkpoint: () => Promise<void>;
}

export interface CompactionResult {
  outcome: "completed" | "skipped";
  tokensBefore: number;
  tokensAfter: number;
}

/**
 * Summarises the older messages with one model call and keeps the recent ones
 * verbatim. The system prompt (with AGENTS.md) is rebuilt for every request and
 * never part of the history, so it stays pinned. A cancel leaves the context as
 * it was: the summary is appended only once it is complete.
 */
export async function compactContext(run: CompactionRun, request: CompactionRequest): Promise<CompactionResult> {
  const { context, emit } = run;
  const tokensBefore = context.estimatedTokens();
  emit.event({
    type: "compaction.started",
    payload: { turnId: emit.turnId, reason: request.reason, tokens: tokensBefore },
  });
  const view = context.view().filter(({ record }) => record.kind === "message" || record.kind === "compaction");
  const cut = chooseCut(view, Math.floor(run.contextWindow * RECENT_SHARE));
  const completed = (outcome: "completed" | "skipped" | "cancelled" | "error", tokensAfter: number, message?: string) =>
    emit.event({
      type: "compaction.completed",
      payload: {
        turnId: emit.turnId,
        outcome,
        tokensBefore,
        tokensAfter,
        summarized: cut,
        kept: view.length - cut,
        message,
      },
    });
  if (cut === 0) {
    completed("skipped", tokensBefore, "Nothing old enough to summarise yet.");
    return { outcome: "skipped", tokensBefore, tokensAfter: tokensBefore };
  }

  try {
    await request.checkpoint();
    const summary = await summarise(run, view.slice(0, cut), request.focus);
    await context.append({ kind: "compaction", summary, keepFrom: view[cut].position });
  } catch (error) {
    if (run.signal.aborted) completed("cancelled", tokensBefore);
    else completed("error", tokensBefore, errorMessage(error));
    throw error;
  }
  const tokensAfter = context.estimatedTokens();
  completed("completed", tokensAfter);
  emit.event({ type: "context.usage", payload: { tokens: tokensAfter, window: run.contextWindow } });
  return { outcome: "completed", tokensBefore, tokensAfter };
}

/**
 * The index in `view` where the verbatim part starts: the earliest message
 * boundary whose suffix fits the budget. A tool result is never a boundary, so
 * a call and its result are never split. 0 means nothing to summarise.
 */
export function chooseCut(view: readonly PositionedRecord[], recentBudget: number): number {
  let tokens = 0;
  let cut = view.length;
  let lastBoundary = -1;
  for (let i = view.length - 1; i >= 0; i--) {
    tokens += recordTokens(view[i].record);
    if (!isBoundary(view[i])) continue;
    if (lastBoundary === -1) lastBoundary = i;
    if (tokens > recentBudget) break;
    cut = i;
  }
  // Even when the newest message alone is over budget, it stays verbatim.
  if (cut === view.length) cut = lastBoundary === -1 ? 0 : lastBoundary;
  return Math.max(cut, 0);
}

function isBoundary({ record }: PositionedRecord): boolean {
  return record.kind === "message" && record.message.role !== "tool";
}

async function summarise(
  run: CompactionRun,
  older: readonly PositionedRecord[],
  focusOn: string | undefined,
): Promise<string> {
  const transcript = older.map(({ record }) => render(record)).join("\n\n");
  const focus = focusOn ? `\n\nThe user asked the summary to focus on: ${focusOn}` : "";
  const messages: ChatMessage[] = [
    { role: "system", content: SUMMARY_SYSTEM_PROMPT },
    { role: "user", content: `The conversation so far:\n\n${transcript}${focus}\n\nWrite the summary now.` },
  ];
  // Only retries reach the transcript: the summary is not a chat message.
  const silent: TurnEmitter = {
    turnId: run.emit.turnId,
    event: (event) => {
      if (event.type === "turn.retry") run.emit.event(event);
    },
  };
  const result = await streamStep(
    run.provider,
    { model: run.model, messages },
    { signal: run.signal, emit: silent, policy: run.retry },
  );
  const summary = (result.message.content ?? "").trim();
  if (!summary) throw new Error("The model returned an empty summary.");
  return summary;
}

function render(record: PositionedRecord["record"]): string {
  if (record.kind === "compaction") return cap(summaryMessage(record.summary));
  if (record.kind !== "message") return "";
  const message = record.message;
  const content =
    typeof message.content === "string" || message.content === null
      ? (message.content ?? "")
      : message.content.map((part) => (part.type === "text" ? part.text : "[image]")).join("\n");
  switch (message.role) {
    case "assistant": {
      const calls = (message.tool_calls ?? [])
        .map((call) => `[called ${call.function.name}(${cap(call.function.arguments)})]`)
        .join("\n");
      return `ASSISTANT: ${cap(content ?? "")}${calls ? `\n${calls}` : ""}`;
    }
    case "tool":
      return `TOOL RESULT (${message.tool_call_id}): ${cap(content)}`;
    default:
      return `${message.role.toUpperCase()}: ${cap(content)}`;
  }
}

function cap(text: string): string {
  if (text.length <= SUMMARY_INPUT_CHARS_PER_MESSAGE) return text;
  return `${text.slice(0, SUMMARY_INPUT_CHARS_PER_MESSAGE)} […${text.length - SUMMARY_INPUT_CHARS_PER_MESSAGE} more characters]`;
}
