import type { Page } from "@playwright/test";
import { IdePage } from "./pages/ide-page";
import { bridgeApi, e2e, expect, freshWorkspace, login, test } from "./fixtures";

/** The terminal's buffer text through the page's test hook (WebGL keeps it out of the DOM). */
function terminalText(page: Page, terminalId: string): Promise<string> {
  return page.evaluate((id) => window.worldlineTerminalText?.(id) ?? "", terminalId);
}

test("two tabs share a terminal: typing in one shows in both, a reload restores the screen, and Ctrl-C stops a flood", async ({
  browser,
}) => {
  const context = await browser.newContext();
  const tabA = await context.newPage();
  const tabB = await context.newPage();
  await login(tabA);
  const { id: sessionId } = await bridgeApi<{ id: string }>("/api/v1/sessions", {
    workspace: await freshWorkspace("terminal"),
    title: "Terminal e2e",
  });

  const ideA = new IdePage(tabA);
  await ideA.goto(e2e.baseUrl, sessionId);
  const viewA = await ideA.openTerminal();
  const terminalId = (await viewA.getAttribute("data-terminal-id"))!;

  // Tab B opens the same session: the terminal is listed and shows its current screen.
  const ideB = new IdePage(tabB);
  await ideB.goto(e2e.baseUrl, sessionId);
  if ((await tabB.getByTestId("toggle-terminal").getAttribute("aria-pressed")) !== "true")
    await tabB.getByTestId("toggle-terminal").click();
  await expect(tabB.getByTestId("terminal-view")).toHaveAttribute("data-terminal-id", terminalId);
  await expect(tabB.getByTestId("terminal-view")).toHaveAttribute("data-status", "live");

  await viewA.locator(".xterm").click();
  await tabA.keyboard.type("echo typed-in-a-$((6*7))");
  await tabA.keyboard.press("Enter");
  await expect.poll(() => terminalText(tabA, terminalId)).toContain("typed-in-a-42");
  await expect.poll(() => terminalText(tabB, terminalId)).toContain("typed-in-a-42");

  // Input from the other tab goes into the same shell.
  await tabB.getByTestId("terminal-view").locator(".xterm").click();
  await tabB.keyboard.type("echo typed-in-b-$((6*7))");
  await tabB.keyboard.press("Enter");
  await expect.poll(() => terminalText(tabA, terminalId)).toContain("typed-in-b-42");

  // A reload restores the screen from the bridge's snapshot.
  await tabB.reload();
  await expect(tabB.getByTestId("connection-state")).toContainText("live");
  if ((await tabB.getByTestId("toggle-terminal").getAttribute("aria-pressed")) !== "true")
    await tabB.getByTestId("toggle-terminal").click();
  await expect(tabB.getByTestId("terminal-view")).toHaveAttribute("data-status", "live");
  await expect.poll(() => terminalText(tabB, terminalId)).toContain("typed-in-b-42");
  await expect.poll(() => terminalText(tabB, terminalId)).toContain("typed-in-a-42");

  // A flood keeps the page responsive and Ctrl-C stops it at once.
  await viewA.locator(".xterm").click();
  await tabA.keyboard.type("yes flood-line");
  await tabA.keyboard.press("Enter");
  await expect.poll(() => terminalText(tabA, terminalId)).toContain("flood-line\nflood-line");
  // The flood runs a while on purpose: Ctrl-C must stop a terminal that is deep in output.
  await tabA.waitForTimeout(1_500);
  await tabA.keyboard.press("Control+C");
  await tabA.keyboard.type("echo after-flood-$((6*7))");
  await tabA.keyboard.press("Enter");
  await expect.poll(() => terminalText(tabA, terminalId), { timeout: 5_000 }).toContain("after-flood-42");
  await expect.poll(() => terminalText(tabB, terminalId), { timeout: 10_000 }).toContain("after-flood-42");

  // Closing the tab kills the terminal in every tab.
  await tabA.getByTestId("terminal-tab-close").click();
  await expect(tabA.getByTestId("terminal-tab")).toHaveCount(0);
  await expect(tabB.getByTestId("terminal-tab")).toHaveCount(0);
  await context.close();
});
