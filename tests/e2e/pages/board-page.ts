import { expect, type Locator, type Page } from "@playwright/test";

/** The board `/board`: cards by state, their dialogs, and "New agent". */
export class BoardPage {
  constructor(private readonly page: Page) {}

  async goto(baseUrl: string): Promise<void> {
    await this.page.goto(`${baseUrl}/board`);
    await expect(this.page.getByTestId("board-page")).toBeVisible();
  }

  card(sessionId: string): Locator {
    return this.page.locator(`[data-testid="board-card"][data-session="${sessionId}"]`);
  }

  cardsTitled(prefix: string): Locator {
    return this.page.getByTestId("board-card").filter({ hasText: prefix });
  }

  /** Starts `count` agents on one prompt through the "New agent" dialog. */
  async startAgents(prompt: string, folder: string, count: number): Promise<void> {
    await this.page.getByTestId("new-agent").click();
    const dialog = this.page.getByTestId("new-agent-dialog");
    // The folder field takes the most recent folder once the lists come: typed before, the two mixed.
    await expect(dialog.locator("form")).toHaveAttribute("data-loaded", "true");
    await dialog.getByTestId("agent-prompt").fill(prompt);
    await dialog.getByTestId("agent-folder").fill(folder);
    await expect(dialog.getByTestId("agent-folder")).toHaveValue(folder);
    await expect(dialog.getByTestId("agent-isolation")).toBeChecked();
    await dialog.getByTestId("agent-count").selectOption(String(count));
    await dialog.getByTestId("agent-start").click();
    await expect(dialog).toHaveCount(0, { timeout: 60_000 });
  }

  /**
   * Records every state each card shows, in order, from now on (a card that changes column is a
   * new element; the recorder follows the attribute wherever it appears).
   */
  async recordStates(): Promise<void> {
    await this.page.evaluate(() => {
      const seen: Record<string, string[]> = {};
      (window as unknown as { __states: Record<string, string[]> }).__states = seen;
      const note = () => {
        for (const card of document.querySelectorAll<HTMLElement>('[data-testid="board-card"]')) {
          const id = card.dataset.session!;
          const states = (seen[id] ??= []);
          if (states.at(-1) !== card.dataset.state) states.push(card.dataset.state!);
        }
      };
      new MutationObserver(note).observe(document.body, {
        subtree: true,
        childList: true,
        attributes: true,
        attributeFilter: ["data-state"],
      });
      note();
    });
  }

  states(sessionId: string): Promise<string[]> {
    return this.page.evaluate(
      (id) => (window as unknown as { __states: Record<string, string[]> }).__states[id] ?? [],
      sessionId,
    );
  }
}
