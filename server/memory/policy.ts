import * as z from "zod";
import { MemoryScope, MemoryType } from "../protocol";
import { looksSecret, MEMORY_TEXT_MAX_CHARS, ruleCandidate, type MemoryCandidate } from "./rules";

/** A one-shot model call without tools: system + user text in, the reply's text out. */
export type CompleteText = (system: string, user: string) => Promise<string>;

export interface MemoryDecision {
  via: "rules" | "model";
  reason: string;
  /** Present when something should be stored. */
  candidate?: MemoryCandidate;
}

/** The exchange shown to the deciding model is capped: the decision needs the gist, not the whole turn. */
const DECISION_INPUT_MAX_CHARS = 4000;

export const MEMORY_DECISION_PROMPT = `You decide whether anything from one exchange between a user and a coding agent is worth remembering in FUTURE sessions.
Keep only durable things: facts about the user or the project, the user's preferences and standing instructions. Never secrets or passwords, never one-off task details.
Reply with one JSON object and nothing else:
{"store": true, "text": "<one self-contained sentence>", "type": "fact" | "preference" | "note", "scope": "global" | "workspace", "importance": 1-5, "reason": "<why>"}
or {"store": false, "reason": "<why>"}.
Use scope "workspace" for things about this project, "global" for things about the user.`;

const ModelDecision = z.object({
  store: z.boolean(),
  text: z.string().optional(),
  type: MemoryType.exclude(["lesson"]).optional(),
  scope: MemoryScope.exclude(["session"]).optional(),
  importance: z.coerce.number().int().min(1).max(5).optional(),
  reason: z.string().optional(),
});

/**
 * The post-turn memory decision. Rules look at the user's words first; a turn
 * they find nothing in is skipped without a model call (null: no decision made).
 * With a model, a cheap call confirms and rewrites the candidate; when its reply
 * is unusable the rule's candidate stands.
 */
export async function decideMemory(input: {
  prompt: string;
  answer: string;
  complete?: CompleteText;
}): Promise<MemoryDecision | null> {
  const candidate = ruleCandidate(input.prompt);
  if (!candidate) return null;
  const ruled: MemoryDecision = { via: "rules", reason: "The user stated something to keep.", candidate };
  if (!input.complete) return ruled;
  let reply: string;
  try {
    reply = await input.complete(MEMORY_DECISION_PROMPT, exchange(input.prompt, input.answer));
  } catch {
    return ruled; // the model being unavailable is no reason to forget what the user asked to keep
  }
  const parsed = parseJsonObject(reply, ModelDecision);
  if (!parsed) return ruled;
  const reason =
    parsed.reason?.trim() || (parsed.store ? "The model chose to keep it." : "The model chose not to keep it.");
  if (!parsed.store) return { via: "model", reason };
  const text = (parsed.text?.trim() || candidate.text).slice(0, MEMORY_TEXT_MAX_CHARS);
  if (looksSecret(text)) return { via: "model", reason: "It looks like a secret; not stored." };
  return {
    via: "model",
    reason,
    candidate: {
      text,
      type: parsed.type ?? candidate.type,
      scope: parsed.scope ?? candidate.scope,
      importance: parsed.importance ?? candidate.importance,
    },
  };
}

function exchange(prompt: string, answer: string): string {
  const half = DECISION_INPUT_MAX_CHARS / 2;
  return `User:\n${prompt.slice(0, half)}\n\nAgent:\n${answer.slice(0, half)}`;
}

/** The first JSON object in a reply (models like to wrap it in prose or fences), validated. */
export function parseJsonObject<T>(reply: string, schema: z.ZodType<T>): T | undefined {
  const start = reply.indexOf("{");
  const end = reply.lastIndexOf("}");
  if (start === -1 || end <= start) return undefined;
  try {
    const result = schema.safeParse(JSON.parse(reply.slice(start, end + 1)));
    return result.success ? result.data : undefined;
  } catch {
    // not JSON: no decision, the default applies
    return undefined;
  }
}
