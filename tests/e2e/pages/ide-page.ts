import { expect, type Locator, type Page } from "@playwright/test";

/** The IDE around a session at `/s/<id>`: tree, editor tabs, agent panel, status bar. */
export class IdePage {
  private autoStartedUsed = false;

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

  attachments(): Locator {
    return this.page.getByTestId("attachment");
  }

  /**
   * Opens the bottom panel if needed and a new terminal (the panel starts one itself on a
   * session without terminals); resolves when it is live.
   */
  async openTerminal(): Promise<Locator> {
    if ((await this.page.getByTestId("toggle-terminal").getAttribute("aria-pressed")) !== "true")
      await this.page.getByTestId("toggle-terminal").click();
    const panel = this.page.getByTestId("terminal-panel");
    await expect(panel).not.toHaveAttribute("data-opened", "loading");
    // The panel was empty when it opened (now, or with the page): the terminal it started is the new one.
    if (!this.autoStartedUsed && (await panel.getAttribute("data-opened")) === "empty") {
      this.autoStartedUsed = true;
      await expect(this.page.getByTestId("terminal-tab")).toHaveCount(1);
    } else {
      const before = await this.page.getByTestId("terminal-tab").count();
      await this.page.getByTestId("terminal-new").click();
      await expect(this.page.getByTestId("terminal-tab")).toHaveCount(before + 1);
    }
    const view = this.page.getByTestId("terminal-view");
    await expect(view).toHaveAttribute("data-status", "live");
    return view;
  }

  /** Pixels of an element's screenshot that differ clearly from its top-left (background) pixel. */
  async litPixels(target: Locator): Promise<number> {
    const png = (await target.screenshot()).toString("base64");
    return this.page.evaluate(async (data) => {
      const image = new Image();
      image.src = `data:image/png;base64,${data}`;
      await image.decode();
      const canvas = document.createElement("canvas");
      canvas.width = image.width;
      canvas.height = image.height;
      const g = canvas.getContext("2d")!;
      g.drawImage(image, 0, 0);
      const px = g.getImageData(0, 0, canvas.width, canvas.height).data;
      let lit = 0;
      for (let i = 0; i < px.length; i += 4) {
        if (Math.abs(px[i] - px[0]) + Math.abs(px[i + 1] - px[1]) + Math.abs(px[i + 2] - px[2]) > 96) lit++;
      }
      return lit;
    }, png);
  }

  async shot(name: string): Promise<void> {
    await this.page.screenshot({ path: `/tmp/ide-${name}.png` });
  }
}
