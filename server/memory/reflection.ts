import * as z from "zod";
import { parseJsonObject, type CompleteText } from "./policy";
import { looksSecret, MEMORY_TEXT_MAX_CHARS } from "./rules";

export const REFLECTION_PROMPT = `You are a critic reviewing a finished task of a coding agent.
Find ONE reusable lesson that would make the agent better at similar tasks in this project next time (a pitfall, a command that works, a convention of the codebase).
Reply with one JSON object and nothing else: {"lesson": "<one imperative sentence>", "importance": 1-5}, or {"lesson": null} when there is nothing worth keeping.`;

/** The critic sees the gist of the turn, capped. */
const REFLECTION_INPUT_MAX_CHARS = 8000;

const Critique = z.object({
  lesson: z.string().nullable(),
  importance: z.coerce.number().int().min(1).max(5).optional(),
});

export interface ReflectionOutcome {
  lesson?: string;
  importance: number;
  error?: boolean;
  message?: string;
}

/** One critic call over the finished turn; a lesson or the reason there is none. */
export async function reflect(input: {
  prompt: string;
  transcript: string;
  complete?: CompleteText;
}): Promise<ReflectionOutcome> {
  if (!input.complete) return { importance: 3, message: "No model is configured to reflect with." };
  let reply: string;
  try {
    reply = await input.complete(
      REFLECTION_PROMPT,
      `Task:\n${input.prompt}\n\nWhat happened:\n${input.transcript}`.slice(0, REFLECTION_INPUT_MAX_CHARS),
    );
  } catch (error) {
    return { importance: 3, error: true, message: error instanceof Error ? error.message : String(error) };
  }
  const critique = parseJsonObject(reply, Critique);
  const lesson = critique ? critique.lesson?.trim() : undefined;
  if (!critique) return { importance: 3, error: true, message: "The critic's reply was not the JSON asked for." };
  if (!lesson) return { importance: 3, message: "Nothing worth keeping." };
  if (looksSecret(lesson)) return { importance: 3, message: "The lesson looked like a secret; not stored." };
  return { lesson: lesson.slice(0, MEMORY_TEXT_MAX_CHARS), importance: critique.importance ?? 3 };
}
