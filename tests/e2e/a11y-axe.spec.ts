import fs from "node:fs/promises";
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { SessionPage } from "./pages/session-page";
import { bridgeApi, e2e, expect, login, newSession, scriptLlm, test } from "./fixtures";

/**
 * Axe-core's WCAG 2.1 A/AA rules over every page and state a user reaches, in the dark and
 * the light theme. No rule is switched off; a serious or critical violation fails the test. Every
 * violation found (any impact) is also appended to WORLDLINE_AXE_REPORT (JSON lines), for the before/after note.
 */

const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];
const BLOCKING = new Set(["serious", "critical"]);
const REPORT = process.env.WORLDLINE_AXE_REPORT;
const THEMES = ["dark", "light"] as const;
type Theme = (typeof THEMES)[number];

/** Applies a theme the way the app keeps it (the layout in localStorage and on <html>), without a click. */
async function applyTheme(page: Page, theme: Theme): Promise<void> {
  await page.evaluate((value) => {
    const key = "worldline.layout";
    const stored = JSON.parse(localStorage.getItem(key) ?? "{}") as Record<string, unknown>;
    localStorage.setItem(key, JSON.stringify({ ...stored, theme: value }));
    document.documentElement.dataset.theme = value;
  }, theme);
  await expect(page.locator("html")).toHaveAttribute("data-theme", theme);
}

/** Runs axe over the page in both themes; returns the serious and critical rule ids, with where. */
async function audit(page: Page, state: string): Promise<string[]> {
  const blocking: string[] = [];
  for (const theme of THEMES) {
    await applyTheme(page, theme);
    const result = await new AxeBuilder({ page }).withTags(TAGS).analyze();
    for (const violation of result.violations) {
      const impact = violation.impact ?? "unknown";
      const targets = violation.nodes.map((node) => node.target.join(" "));
      // One JSON line per finding, appended: a failed test restarts the worker, so nothing is kept in memory.
      if (REPORT) {
        const why = violation.nodes.map((node) => node.failureSummary ?? "");
        const line = { state, theme, rule: violation.id, impact, targets, why };
        await fs.appendFile(REPORT, `${JSON.stringify(line)}\n`);
      }
      if (BLOCKING.has(impact))
        blocking.push(`${theme} ${violation.id} (${impact}): ${targets.slice(0, 4).join(" | ")}`);
    }
  }
  return blocking;
}

async function check(page: Page, state: string): Promise<void> {
  expect.soft(await audit(page, state), `serious or critical axe violations on ${state}`).toEqual([]);
}

async function turnDone(page: Page, count: number): Promise<void> {
  await expect(page.getByTestId("message-text")).toHaveCount(count, { timeout: 20_000 });
  await expect(page.getByTestId("stop-button")).toHaveCount(0);
}

test("home, settings, memory and approvals have no serious or critical violation", async ({ page }) => {
  await login(page);
  await newSession("axe-home");
  await page.goto(`${e2e.baseUrl}/`);
  await expect(page.getByTestId("workspace-input")).toBeVisible();
  await check(page, "home");
  await page.goto(`${e2e.baseUrl}/settings`);
  await expect(page.getByTestId("add-provider")).toBeVisible();
  await check(page, "settings");
  await page.goto(`${e2e.baseUrl}/memory`);
  await expect(page.locator("main select").first()).toBeVisible();
  await check(page, "memory");
  await page.goto(`${e2e.baseUrl}/approvals`);
  await expect(page.getByTestId("approvals-page")).toBeVisible();
  await check(page, "approvals");
});

test("a session: a reply, the Changes view, the timeline, the terminal, plan mode", async ({ page }) => {
  test.setTimeout(120_000);
  const { id } = await newSession("axe-session", { files: { "src/a.ts": "export const a = 1;\n" } });
  await scriptLlm(
    { toolCalls: [{ name: "write_file", arguments: { path: "src/a.ts", content: "export const a = 2;\n" } }] },
    { text: "Changed **a** to `2`.\n\n- one\n- two" },
  );
  await login(page);
  const session = new SessionPage(page);
  await session.goto(e2e.baseUrl, id);
  await session.send("Bump a");
  await turnDone(page, 1);
  await check(page, "session with a reply");

  await page.getByTestId("toggle-changes").click();
  await page.locator('[data-testid="changes-file"][data-path="src/a.ts"]').click();
  await expect(page.getByTestId("hunk")).toHaveCount(1);
  await check(page, "Changes view");
  await page.getByTestId("toggle-changes").click();

  await page.getByTestId("toggle-timeline").click();
  await expect(page.getByTestId("timeline-turn-1")).toBeVisible();
  await check(page, "timeline");
  await page.getByTestId("timeline-menu-1").click();
  await expect(page.getByRole("menuitem").first()).toBeVisible();
  await check(page, "timeline menu");
  await page.keyboard.press("Escape");
  await page.getByTestId("toggle-timeline").click();

  await page.getByTestId("toggle-terminal").click();
  await expect(page.getByTestId("terminal-view")).toHaveAttribute("data-status", "live");
  await check(page, "terminal panel");
  await page.getByTestId("toggle-terminal").click();

  await page.getByTestId("plan-toggle").click();
  await expect(page.getByTestId("plan-toggle")).toHaveAttribute("aria-pressed", "true");
  await scriptLlm(
    { toolCalls: [{ name: "propose_plan", arguments: { plan: "## Plan\n\n1. Do it." } }] },
    { text: "Ready." },
  );
  await session.send("Plan the next step");
  await turnDone(page, 2);
  await expect(page.getByTestId("plan-card")).toBeVisible();
  await check(page, "plan mode");
});

test("a pending approval, in the session and on /approvals", async ({ page }) => {
  const { id } = await newSession("axe-approval", { yolo: false });
  const command = `touch axe-${Date.now()}.txt`;
  await scriptLlm({ toolCalls: [{ name: "shell", arguments: { command } }] }, { text: "Done." });
  await login(page);
  const session = new SessionPage(page);
  await session.goto(e2e.baseUrl, id);
  await session.send("Touch a file");
  await expect(page.getByTestId("tool-card").last()).toHaveAttribute("data-state", "waiting_approval");
  await check(page, "pending approval card");
  await page.goto(`${e2e.baseUrl}/approvals`);
  await expect(page.getByTestId("approval-card")).toHaveCount(1);
  await check(page, "approvals with a request");
  await expect(page.getByRole("status").filter({ hasText: "waiting" })).toHaveText("1 request waiting");
  // Leaves no request behind for the specs that count them; the page's live region follows.
  await bridgeApi(`/api/v1/sessions/${id}/cancel`, {});
  await expect(page.getByTestId("approval-card")).toHaveCount(0);
  await expect(page.getByTestId("approvals-announcer")).toHaveText("0 requests waiting");
});

test("the phone layout and a shared view", async ({ browser }) => {
  const { id } = await newSession("axe-phone");
  await scriptLlm({ text: "Hello on a phone." });
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  const page = await phone.newPage();
  await login(page);
  const session = new SessionPage(page);
  await session.goto(e2e.baseUrl, id);
  await session.send("hi");
  await turnDone(page, 1);
  await check(page, "phone layout");
  await page.goto(`${e2e.baseUrl}/`);
  await expect(page.getByTestId("workspace-input")).toBeVisible();
  await check(page, "phone home");
  await phone.close();

  const link = await bridgeApi<{ path: string }>(`/api/v1/sessions/${id}/share-links`, {
    scope: "view",
    expires_in: 3600,
  });
  const guestContext = await browser.newContext();
  const guest = await guestContext.newPage();
  await guest.goto(`${e2e.baseUrl}${link.path}`);
  await new SessionPage(guest).waitLive();
  await expect(guest.getByTestId("view-only-notice")).toBeVisible();
  await check(guest, "shared view");
  await guestContext.close();
});

test("the board, a card's dialogs and New agent, on a desktop and a phone", async ({ browser, page }) => {
  // Ten audits (five states, two themes each); axe takes its time on a loaded two-core machine.
  test.setTimeout(360_000);
  const { id } = await newSession("axe-board");
  await login(page);
  await page.goto(`${e2e.baseUrl}/board`);
  const card = page.locator(`[data-testid="board-card"][data-session="${id}"]`);
  await expect(card).toBeVisible();
  await check(page, "board");
  await page.getByTestId("new-agent").click();
  await expect(page.getByTestId("agent-prompt")).toBeFocused();
  await check(page, "New agent dialog");
  await page.keyboard.press("Escape");
  await card.getByTestId("card-archive").click();
  await expect(page.getByTestId("archive-dialog")).toBeVisible();
  await check(page, "archive dialog");
  await page.keyboard.press("Escape");
  await page.getByTestId("board-show-archived").check();
  await check(page, "board with archived");

  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  const small = await phone.newPage();
  await login(small);
  await small.goto(`${e2e.baseUrl}/board`);
  await expect(small.locator(`[data-testid="board-card"][data-session="${id}"]`)).toBeVisible();
  await check(small, "phone board");
  // The columns stack: nothing is wider than the screen.
  expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await phone.close();
});
