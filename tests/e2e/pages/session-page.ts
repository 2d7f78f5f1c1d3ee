import { expect, type Locator, type Page } from "@playwright/test";

/** The session page `/s/<id>`: transcript and prompt input. */
export class SessionPage {
  constructor(private readonly page: Page) {}

  async goto(baseUrl: string, sessionId: string): Promise<void> {
    await this.page.goto(`${baseUrl}/s/${sessionId}`);
    await this.waitLive();
  }

  async waitLive(): Promise<void> {
    await expect(this.page.getByTestId("connection-state")).toContainText("live");
  }

  async send(text: string): Promise<void> {
    await this.page.getByTestId("prompt-input").fill(text);
    await this.page.getByTestId("prompt-input").press("Enter");
  }

  assistantMessages(): Locator {
    return this.page.getByTestId("message-text");
  }

  userMessages(): Locator {
    return this.page.getByTestId("message-user");
  }
}
