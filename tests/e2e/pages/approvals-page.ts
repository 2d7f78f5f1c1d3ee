import { expect, type Locator, type Page } from "@playwright/test";

/** The approvals queue `/approvals`. */
export class ApprovalsPage {
  constructor(private readonly page: Page) {}

  async goto(baseUrl: string): Promise<void> {
    await this.page.goto(`${baseUrl}/approvals`);
    await expect(this.page.getByTestId("approvals-page")).toBeVisible();
  }

  cards(): Locator {
    return this.page.getByTestId("approval-card");
  }

  card(command: string): Locator {
    return this.cards().filter({ has: this.page.getByTestId("approval-command").filter({ hasText: command }) });
  }

  navBadge(): Locator {
    return this.page.getByTestId("approvals-badge");
  }

  historyRows(): Locator {
    return this.page.getByTestId("history-row");
  }

  async openTab(name: "pending" | "history" | "rules"): Promise<void> {
    await this.page.getByTestId(`approvals-tab-${name}`).click();
  }
}
