import type { Context, HistoryRecord, WorkspaceTold } from "./context";
import type { TurnRecall } from "./memory-port";
import { formatAgentsMd, renderSystemPrompt, type WorkspacePrompt } from "./system-prompt";

/**
 * What a turn sends besides the user's words, arranged for a provider's prompt cache: the
 * session's system prompt is rendered once and kept in the history, so every request starts with the same
 * bytes; what changes from turn to turn (the time, recalled memories, a changed listing, edited AGENTS.md,
 * the task list, an invoked skill) goes at the end, in a short `<context>` block appended to that turn's
 * user message, where it never disturbs the prefix of later requests.
 */
export interface TurnPrompt {
  /** The session's fixed system prompt. */
  systemPrompt: string;
  /** Records for the history before the turn starts (a new session's system prompt and what it told). */
  before: HistoryRecord[];
  /** The `<context>` block for the turn's user message and the records that go with it. */
  userContext: { text: string; records: HistoryRecord[] };
}

export interface TurnPromptInput {
  context: Context;
  workspace: string;
  workspacePrompt: WorkspacePrompt;
  recall: TurnRecall;
  /** The session's task list as stored (JSON), for telling the model when it changed. */
  todos?: string;
  now?: Date;
}

export function prepareTurnPrompt(input: TurnPromptInput): TurnPrompt {
  const { context, workspace, workspacePrompt, recall } = input;
  const now = input.now ?? new Date();
  const current: WorkspaceTold = {
    listing: workspacePrompt.listing,
    agentsMd: formatAgentsMd(workspacePrompt.agentsMd),
    todos: formatTodos(input.todos),
  };
  const before: HistoryRecord[] = [];
  let systemPrompt = context.systemPrompt();
  let told = context.told();
  if (systemPrompt === undefined) {
    systemPrompt = renderSystemPrompt(workspacePrompt, { workspace, skills: recall.skills, now });
    // The task list is not in the system prompt: an empty one needs no telling, a non-empty one is told below.
    told = { ...current, todos: undefined };
    before.push({ kind: "system", content: systemPrompt }, { kind: "told", ...told });
  }
  const seen = [systemPrompt, ...context.messages().map(messageText)].join("\n");
  const lines: string[] = [`Time: ${formatTime(now)}`];
  const memories = recall.memories
    .split("\n")
    .filter((line) => line.trim() && !seen.includes(line))
    .join("\n");
  if (memories) lines.push(`Recalled memories:\n${memories}`);
  if (told && current.listing !== told.listing)
    lines.push(`The workspace's top level changed; now:\n${current.listing}`);
  if (told && current.agentsMd !== told.agentsMd) {
    lines.push(
      current.agentsMd
        ? `The AGENTS.md instructions changed; they now read:${current.agentsMd.trimEnd()}`
        : "The AGENTS.md files were removed; their instructions no longer apply.",
    );
  }
  // The todo tool's result already shows the list it set: tell it only when the model has not seen it.
  if (current.todos && current.todos !== told?.todos && !seen.includes(current.todos)) {
    lines.push(`Your task list:\n${current.todos}`);
  }
  if (recall.invokedSkill) lines.push(recall.invokedSkill.trim());
  const changed =
    !told ||
    current.listing !== told.listing ||
    current.agentsMd !== told.agentsMd ||
    (current.todos ?? "") !== (told.todos ?? "");
  return {
    systemPrompt,
    before,
    userContext: {
      text: `<context>\n${lines.join("\n\n")}\n</context>`,
      records: changed ? [{ kind: "told", ...current }] : [],
    },
  };
}

/** Minutes are enough for a coding agent, and keep the block short. */
function formatTime(now: Date): string {
  return `${now.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

function formatTodos(stored: string | undefined): string | undefined {
  if (!stored) return undefined;
  let items: { title?: string; status?: string }[];
  try {
    items = JSON.parse(stored) as typeof items;
  } catch {
    return undefined; // a corrupt list is not worth failing a turn over
  }
  if (!Array.isArray(items) || items.length === 0) return undefined;
  const mark: Record<string, string> = { pending: "[ ]", in_progress: "[~]", done: "[x]" };
  return items.map((item) => `${mark[item.status ?? ""] ?? "[ ]"} ${item.title ?? ""}`).join("\n");
}

function messageText(message: ReturnType<Context["messages"]>[number]): string {
  if (typeof message.content === "string") return message.content;
  if (Array.isArray(message.content))
    return message.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
  return "";
}
