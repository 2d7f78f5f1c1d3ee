import type { TitlePort } from "../agent";
import type { Sessions } from "../sessions";
import { DEFAULT_SESSION_TITLE } from "../store";
import { cleanModelTitle, firstWordsTitle } from "./words";

/** The model sees this much of the first prompt: a title needs the gist, not a pasted file. */
const PROMPT_MAX_CHARS = 2_000;

const TITLE_SYSTEM = [
  "You name coding sessions. Reply with a title of 2 to 6 words for the session that starts with the user's message.",
  "Reply with the title only: no quotes, no label, no full stop. Use the language of the message.",
].join(" ");

/**
 * Names each session after its first prompt: by one cheap model call when a model is set,
 * otherwise (or when that call fails or says nothing) by the prompt's first words. A name
 * given before the title arrives (at creation or a rename) is kept. The title reaches every
 * tab as a `session.updated` event, like a rename.
 */
export class SessionTitles implements TitlePort {
  private readonly controller = new AbortController();
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly sessions: Sessions) {}

  firstPrompt(input: Parameters<TitlePort["firstPrompt"]>[0]): void {
    if (input.title !== DEFAULT_SESSION_TITLE || this.controller.signal.aborted) return;
    const job: Promise<void> = this.name(input)
      .catch((error: unknown) => {
        // The session may have been deleted meanwhile; an unnamed session is no failure of the turn.
        console.error(`[worldline] naming session ${input.sessionId} failed: ${(error as Error)?.message ?? error}`);
      })
      .finally(() => this.running.delete(job));
    this.running.add(job);
  }

  /** Stops naming in flight (bridge shutdown) and waits for it to settle. */
  async close(): Promise<void> {
    this.controller.abort();
    await Promise.allSettled([...this.running]);
  }

  /** Resolves when every title started so far is written (tests). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }

  private async name(input: Parameters<TitlePort["firstPrompt"]>[0]): Promise<void> {
    const { sessionId, prompt, complete } = input;
    let title: string | null = null;
    if (complete) {
      const answer = await complete(TITLE_SYSTEM, prompt.slice(0, PROMPT_MAX_CHARS), this.controller.signal).catch(
        () => "", // a failed title call falls back to the prompt's words
      );
      title = cleanModelTitle(answer);
    }
    title ??= firstWordsTitle(prompt);
    if (!title || this.controller.signal.aborted) return;
    const session = await this.sessions.get(sessionId);
    if (session.title !== DEFAULT_SESSION_TITLE) return;
    await this.sessions.update(sessionId, { title });
  }
}
