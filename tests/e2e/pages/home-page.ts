import type { Page } from "@playwright/test";

/** The session list and the new-session form at `/`. */
export class HomePage {
  constructor(private readonly page: Page) {}

  async createSession(workspace: string): Promise<string> {
    await this.page.getByTestId("workspace-input").fill(workspace);
    await this.page.getByTestId("create-session").click();
    await this.page.waitForURL(/\/s\/[^/]+$/);
    return new URL(this.page.url()).pathname.split("/").at(-1)!;
  }
}
