import type { WorkspaceHost } from "../host";
import type { SessionEvent } from "../protocol";
import type { TurnEnd } from "../memory";
import { parseSkillCommand } from "../skills";
import type { Context } from "./context";
import type { TurnResult } from "./loop";
import type { ChatProvider } from "./provider";
import type { TurnEmitter } from "./turn-emitter";

/** What the `remember` tool stores. */
export interface RememberArgs {
  text: string;
  type: "fact" | "preference" | "note" | "lesson";
  scope: "global" | "workspace" | "session";
  importance: number;
}

/** Memory as the runtime uses it (server/memory implements it). */
export interface MemoryPort {
  recall(input: {
    sessionId: string;
    workspace: string;
    prompt: string;
  }): Promise<{ section: string; direct: boolean }>;
  remember(
    input: RememberArgs & { sessionId: string; workspace: string; turnId: string },
    emit: (event: SessionEvent) => void,
  ): Promise<{ id: string }>;
  /** The post-turn decision and reflection; its input is server/memory's own (one definition). */
  afterTurn(input: TurnEnd): Promise<void>;
}

/** Skills as the runtime uses them (server/skills). */
export interface SkillsPort {
  /** One line per skill, for the system prompt; `host`: the session's runner, where the workspace's skills are. */
  summaries(workspace: string, host?: WorkspaceHost): Promise<string>;
  load(
    workspace: string,
    name: string,
    host?: WorkspaceHost,
  ): Promise<{ name: string; path: string; text: string } | undefined>;
}

/** What a turn adds to its system prompt from memory and skills, and whether it may skip tools. */
export interface TurnRecall {
  memories: string;
  skills: string;
  /** A `/skill:<name>` prompt: the skill's full text, for the system prompt. */
  invokedSkill: string;
  /** A plain question a memory answers: the turn is answered without tools. */
  direct: boolean;
}

/** The transcript the critic reads is capped; the end of the turn matters most. */
const TRANSCRIPT_MAX_CHARS = 6000;
/** The memory decision and the critic are short answers. */
const AFTER_TURN_TIMEOUT_MS = 60_000;

/** Recalled memories, skill summaries and an invoked skill for one turn. A failing part is left out, never failing the turn. */
export async function recallForTurn(
  ports: { memory?: MemoryPort; skills?: SkillsPort },
  input: { sessionId: string; workspace: string; prompt: string; host?: WorkspaceHost },
): Promise<TurnRecall> {
  // Both are on the way to the first token; neither needs the other.
  const [recall, summaries] = await Promise.all([
    ports.memory?.recall(input).catch(() => undefined), // memory is a hint: a failed recall must not stop the turn
    ports.skills?.summaries(input.workspace, input.host).catch(() => ""), // an unreadable skills folder only hides the skills list
  ]);
  const skills = summaries ?? "";
  const name = parseSkillCommand(input.prompt)?.name;
  // An unknown or unreadable skill runs the prompt as written.
  const skill = name ? await ports.skills?.load(input.workspace, name, input.host).catch(() => undefined) : undefined;
  const invokedSkill = skill
    ? `\n\nThe user invoked the skill "${skill.name}" (${skill.path}). Follow its instructions:\n\n${skill.text}`
    : name
      ? `\n\nThe user asked for a skill named "${name}", but no such skill exists; say so.`
      : "";
  return { memories: recall?.section ?? "", skills, invokedSkill, direct: Boolean(recall?.direct) && !name };
}

/** After a finished turn: the memory decision and reflection, each a cheap tool-less model call. */
export async function afterTurnMemory(
  memory: MemoryPort | undefined,
  turn: {
    sessionId: string;
    workspace: string;
    prompt: string;
    result: TurnResult;
    context: Context;
    emit: TurnEmitter;
    provider: ChatProvider;
    model: string;
    signal: AbortSignal;
  },
): Promise<void> {
  if (!memory || turn.signal.aborted) return;
  const complete = (system: string, user: string) => completeText(turn.provider, turn.model, system, user, turn.signal);
  const { answer, transcript } = summariseTurn(turn.context);
  await memory
    .afterTurn({
      sessionId: turn.sessionId,
      workspace: turn.workspace,
      turnId: turn.emit.turnId,
      prompt: turn.prompt,
      answer,
      transcript,
      outcome: turn.result.outcome,
      emit: (event) => turn.emit.event(event),
      complete,
    })
    .catch(() => undefined); // memory is an extra; the turn's result stands
}

/** One model call without tools; the reply's text. */
export async function completeText(
  provider: ChatProvider,
  model: string,
  system: string,
  user: string,
  signal: AbortSignal,
  options: { purpose?: string; timeoutMs?: number } = {},
): Promise<string> {
  const controller = new AbortController();
  const forward = () => controller.abort(signal.reason);
  signal.addEventListener("abort", forward, { once: true });
  const timer = setTimeout(() => controller.abort(new Error("timed out")), options.timeoutMs ?? AFTER_TURN_TIMEOUT_MS);
  try {
    let text = "";
    const messages = [
      { role: "system" as const, content: system },
      { role: "user" as const, content: user },
    ];
    const request = { model, messages, reasoning: "off" as const, signal: controller.signal, purpose: options.purpose };
    for await (const chunk of provider.stream(request)) {
      if (chunk.type === "text") text += chunk.delta;
    }
    return text;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", forward);
  }
}

/** The turn's final answer and a compact transcript (from its last user message on). */
function summariseTurn(context: Context): { answer: string; transcript: string } {
  const messages = context.messages();
  let start = messages.length - 1;
  while (start > 0 && messages[start].role !== "user") start--;
  const lines: string[] = [];
  let answer = "";
  for (const message of messages.slice(start)) {
    if (message.role === "assistant") {
      if (message.content) answer = message.content;
      const calls = (message.tool_calls ?? []).map(
        (call) => `${call.function.name}(${call.function.arguments.slice(0, 200)})`,
      );
      lines.push(`assistant: ${message.content ?? ""}${calls.length ? ` [calls: ${calls.join(", ")}]` : ""}`);
    } else if (message.role === "tool") {
      lines.push(`tool result: ${message.content.slice(0, 300)}`);
    } else if (message.role === "user") {
      lines.push(`user: ${typeof message.content === "string" ? message.content : "(content parts)"}`);
    }
  }
  const transcript = lines.join("\n");
  return {
    answer,
    transcript: transcript.length > TRANSCRIPT_MAX_CHARS ? `…${transcript.slice(-TRANSCRIPT_MAX_CHARS)}` : transcript,
  };
}
