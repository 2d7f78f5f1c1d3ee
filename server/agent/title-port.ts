import { completeText } from "./memory-port";
import type { ChatProvider } from "./provider";
import type { PendingTurn } from "./turn-queue";

/** Names sessions after their first prompt (server/titles implements it). */
export interface TitlePort {
  /** Starts naming in the background and returns at once; a failure never touches the turn. */
  firstPrompt(input: {
    sessionId: string;
    /** The title as the turn found it: only an unnamed session is named. */
    title: string;
    prompt: string;
    /** One tool-less model call, when a model is set; absent means "use the prompt's words". */
    complete?: (system: string, user: string, signal: AbortSignal) => Promise<string>;
  }): void;
}

/** A title is a few words: a short answer, and never worth holding a slow provider for. */
const TITLE_TIMEOUT_MS = 20_000;

/**
 * On a session's first turn, hands its prompt to the titler. The model call is its own request
 * (purpose "title"): not part of the turn's stream, stats or history.
 */
export function nameAfterFirstPrompt(
  deps: { titles?: TitlePort },
  pending: PendingTurn,
  title: string,
  model?: { provider: ChatProvider; model: string },
): void {
  if (pending.number !== 1 || !deps.titles) return;
  deps.titles.firstPrompt({
    sessionId: pending.sessionId,
    title,
    prompt: pending.prompt,
    complete: model
      ? (system, user, signal) =>
          completeText(model.provider, model.model, system, user, signal, {
            purpose: "title",
            timeoutMs: TITLE_TIMEOUT_MS,
          })
      : undefined,
  });
}
