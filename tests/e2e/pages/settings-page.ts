import type { Locator, Page } from "@playwright/test";

/** /settings: providers, models, default model. */
export class SettingsPage {
  constructor(readonly page: Page) {}

  async goto(baseUrl: string): Promise<void> {
    await this.page.goto(`${baseUrl}/settings`);
  }

  async addProvider(input: { kind: string; key?: string; model: string }): Promise<void> {
    await this.page.getByTestId("add-provider").click();
    await this.page.getByTestId("provider-kind").selectOption(input.kind);
    if (input.key) await this.page.getByTestId("provider-key").fill(input.key);
    await this.page.getByTestId("model-id").first().fill(input.model);
    await this.page.getByTestId("provider-save").click();
  }

  providers(): Locator {
    return this.page.getByTestId("provider-item");
  }
}
