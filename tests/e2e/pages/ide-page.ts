import { expect, type Locator, type Page } from "@playwright/test";

/** The IDE around a session at `/s/<id>`: tree, editor tabs, agent panel, status bar. */
export class IdePage {
  constructor(readonly page: Page) {}

  async goto(baseUrl: string, sessionId: string): Promise<void> {
    await this.page.goto(`${baseUrl}/s/${sessionId}`);
    await expect(this.page.getByTestId("connection-state")).toContainText("live");
  }

  treeItem(path: string): Locator {
    return this.page.locator(`[data-testid="tree-item"][data-path="${path}"]`);
  }

  async openFile(path: string): Promise<void> {
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const dir = this.treeItem(parts.slice(0, i).join("/"));
      if ((await dir.getAttribute("aria-expanded")) !== "true") await dir.click();
    }
    await this.treeItem(path).click();
    await expect(this.editor(path)).toBeVisible();
  }

  editor(path: string): Locator {
    return this.page.locator(`[data-testid="code-editor"][data-path="${path}"]`);
  }

  async typeInEditor(path: string, text: string): Promise<void> {
    await this.editor(path).locator(".cm-content").click();
    await this.page.keyboard.press("ControlOrMeta+End");
    await this.page.keyboard.type(text);
  }

  input(): Locator {
    return this.page.getByTestId("prompt-input");
  }

  async send(text: string): Promise<void> {
    await this.input().fill(text);
    await this.input().press("Enter");
  }

  toolCards(): Locator {
    return this.page.getByTestId("tool-card");
  }

  notice(): Locator {
    return this.page.getByTestId("input-notice");
  }

  statusBar(): Locator {
    return this.page.getByTestId("status-bar");
  }

  async shot(name: string): Promise<void> {
    await this.page.screenshot({ path: `/tmp/ide-${name}.png` });
  }
}
