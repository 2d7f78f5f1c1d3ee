import fs from "node:fs/promises";
import path from "node:path";
import type { Page } from "@playwright/test";
import { SessionPage } from "./pages/session-page";
import { bridgeApi, e2e, expect, freshWorkspace, login, scriptLlm, test } from "./fixtures";

/** Review: the Changes view, rewind from a message, the timeline as turns, plan mode. */

const SCREENS = process.env.WORLDLINE_SCREENS_DIR ?? "/work/screens";
const lines = (...values: string[]) => values.map((value) => `${value}\n`).join("");

async function newSession(name: string, files: Record<string, string> = {}) {
  const workspace = await freshWorkspace(name);
  for (const [file, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(workspace, file)), { recursive: true });
    await fs.writeFile(path.join(workspace, file), content);
  }
  const { id } = await bridgeApi<{ id: string }>("/api/v1/sessions", { workspace, yolo: true, title: name });
  return { id, workspace };
}

async function open(page: Page, sessionId: string): Promise<SessionPage> {
  await login(page);
  const session = new SessionPage(page);
  await session.goto(e2e.baseUrl, sessionId);
  return session;
}

async function turnDone(page: Page, count: number): Promise<void> {
  await expect(page.getByTestId("message-text")).toHaveCount(count, { timeout: 20_000 });
  await expect(page.getByTestId("stop-button")).toHaveCount(0);
}

async function setTheme(page: Page, theme: "dark" | "light"): Promise<void> {
  if ((await page.locator("html").getAttribute("data-theme")) !== theme) await page.getByTestId("toggle-theme").click();
  await expect(page.locator("html")).toHaveAttribute("data-theme", theme);
}

async function shot(page: Page, name: string): Promise<void> {
  await fs.mkdir(SCREENS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENS, `review-${name}.png`) });
}

test("Changes view: side by side and inline, accept and revert per hunk and per file, undo, every tab", async ({
  page,
  browser,
}) => {
  test.setTimeout(120_000);
  const { id, workspace } = await newSession("review-changes", {
    "src/app.ts": lines(
      "export function greet(name: string) {",
      '  return "Hello " + name;',
      "}",
      "",
      "export const version = 1;",
      "",
      "export function farewell(name: string) {",
      '  return "Bye " + name;',
      "}",
    ),
    "notes.md": lines("# Notes", "", "Old note."),
  });
  await scriptLlm(
    {
      toolCalls: [
        {
          name: "write_file",
          arguments: {
            path: "src/app.ts",
            content: lines(
              "export function greet(name: string) {",
              "  return `Hello, ${name}!`;",
              "}",
              "",
              "export const version = 2;",
              "",
              "export function farewell(name: string) {",
              '  return "Bye " + name;',
              "}",
              "",
              "export const answer = 42;",
            ),
          },
        },
        {
          name: "write_file",
          arguments: { path: "CHANGELOG.md", content: lines("# Changelog", "", "- greet is friendlier") },
        },
      ],
    },
    { text: "Updated greet, bumped the version and started a changelog." },
  );
  const session = await open(page, id);
  await session.send("Polish the greeting");
  await turnDone(page, 1);

  await page.getByTestId("toggle-changes").click();
  const view = page.getByTestId("changes-view");
  await expect(view).toBeVisible();
  await expect(view.getByTestId("changes-file")).toHaveCount(2);
  await expect(view.getByTestId("changes-pending")).toHaveText("2 of 2 files to review");
  await view.locator('[data-testid="changes-file"][data-path="src/app.ts"]').click();
  const detail = view.getByTestId("changes-file-detail");
  await expect(detail).toHaveAttribute("data-path", "src/app.ts");
  await expect(detail.getByTestId("hunk")).toHaveCount(3);
  // Side by side: two CodeMirror editors from @codemirror/merge, base left.
  await expect(detail.locator(".cm-mergeView .cm-editor")).toHaveCount(2);
  await expect(detail.locator(".cm-merge-a")).toContainText('return "Hello " + name;');
  await expect(detail.locator(".cm-merge-b")).toContainText("return `Hello, ${name}!`;");
  await setTheme(page, "dark");
  await shot(page, "changes-split-dark");
  await setTheme(page, "light");
  await shot(page, "changes-split-light");

  await view.getByTestId("changes-layout-inline").click();
  await expect(detail.getByTestId("merge-inline")).toBeVisible();
  await expect(detail.locator(".cm-deletedChunk").first()).toBeVisible();
  await shot(page, "changes-inline-light");
  await setTheme(page, "dark");
  await shot(page, "changes-inline-dark");

  // A second tab on the same session follows every review action.
  const other = await browser.newPage();
  await open(other, id);
  await other.getByTestId("toggle-changes").click();
  await expect(other.getByTestId("changes-pending")).toHaveText("2 of 2 files to review");

  // Accept the first hunk: it is marked, nothing on disk changes.
  const hunks = detail.getByTestId("hunk");
  await hunks.nth(0).getByTestId("hunk-accept").click();
  await expect(hunks.nth(0)).toHaveAttribute("data-accepted", "true");
  // Revert the second hunk (version 2 → 1): written to disk, checkpointed.
  await hunks.nth(1).getByTestId("hunk-revert").click();
  await expect(detail.getByTestId("hunk")).toHaveCount(2);
  await expect.poll(() => fs.readFile(path.join(workspace, "src/app.ts"), "utf8")).toContain("version = 1;");
  expect(await fs.readFile(path.join(workspace, "src/app.ts"), "utf8")).toContain("`Hello, ${name}!`");
  // Accept the last hunk: the file leaves the pending list, in both tabs.
  await detail.getByTestId("hunk").nth(1).getByTestId("hunk-accept").click();
  await expect(view.getByTestId("changes-pending")).toHaveText("1 of 2 files to review");
  await expect(other.getByTestId("changes-pending")).toHaveText("1 of 2 files to review");
  await expect(other.locator('[data-testid="changes-file"][data-path="src/app.ts"]')).toHaveAttribute(
    "data-accepted",
    "true",
  );

  // Revert a whole (added) file: it goes, in every tab.
  await view.locator('[data-testid="changes-file"][data-path="CHANGELOG.md"]').click();
  await expect(detail).toHaveAttribute("data-path", "CHANGELOG.md");
  await detail.getByTestId("file-revert").click();
  await expect(view.getByTestId("changes-file")).toHaveCount(1);
  await expect(other.getByTestId("changes-file")).toHaveCount(1);
  await expect
    .poll(() =>
      fs.access(path.join(workspace, "CHANGELOG.md")).then(
        () => "there",
        () => "gone",
      ),
    )
    .toBe("gone");

  // A revert is undoable like a rewind: the timeline's Undo rewind brings the file back.
  await page.getByTestId("toggle-timeline").click();
  await page.getByTestId("timeline-undo-rewind").click();
  await expect
    .poll(() =>
      fs.access(path.join(workspace, "CHANGELOG.md")).then(
        () => "there",
        () => "gone",
      ),
    )
    .toBe("there");
  await expect(view.getByTestId("changes-file")).toHaveCount(2);
  await page.getByTestId("toggle-timeline").click();

  // The phone layout: the file list above the diff.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByTestId("pane-editor").click();
  await view.locator('[data-testid="changes-file"][data-path="src/app.ts"]').click();
  await view.getByTestId("changes-layout-split").click();
  await shot(page, "changes-390-dark");
  await view.getByTestId("changes-layout-inline").click();
  await setTheme(page, "light");
  await shot(page, "changes-390-inline-light");
  await setTheme(page, "dark");
  await other.close();
});

test("rewind from a message: preview, refusal over my edits unless confirmed, undo", async ({ page }) => {
  const { id, workspace } = await newSession("review-rewind", { "a.txt": "a1\n" });
  await scriptLlm(
    { toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "a2\n" } }] },
    { text: "First change done." },
    { toolCalls: [{ name: "write_file", arguments: { path: "b.txt", content: "b1\n" } }] },
    { text: "Second change done." },
  );
  const session = await open(page, id);
  await session.send("Change a");
  await turnDone(page, 1);
  await session.send("Add b");
  await turnDone(page, 2);

  // Rewind the second message: the preview lists the file that would change.
  const rewindButtons = page.getByTestId("message-rewind");
  await expect(rewindButtons).toHaveCount(2);
  await rewindButtons.nth(1).click();
  const panel = page.getByTestId("rewind-panel");
  await expect(panel.getByTestId("rewind-file")).toHaveText([/b\.txt\s*added/]);
  // The user edits b.txt meanwhile: the rewind refuses, naming it.
  await fs.writeFile(path.join(workspace, "b.txt"), "my own edit\n");
  await panel.getByTestId("rewind-confirm").click();
  await expect(panel.getByTestId("rewind-conflict")).toContainText("b.txt");
  expect(await fs.readFile(path.join(workspace, "b.txt"), "utf8")).toBe("my own edit\n");
  await shot(page, "rewind-conflict");
  // Confirmed: the conversation and the files go back to just before "Add b".
  await panel.getByTestId("rewind-force").click();
  await expect(session.userMessages()).toHaveCount(1);
  await expect
    .poll(() =>
      fs.access(path.join(workspace, "b.txt")).then(
        () => "there",
        () => "gone",
      ),
    )
    .toBe("gone");
  expect(await fs.readFile(path.join(workspace, "a.txt"), "utf8")).toBe("a2\n");
  // And undone from the rewind notice.
  await page.getByTestId("rewind-notice-undo").click();
  await expect(session.userMessages()).toHaveCount(2);
  await expect.poll(() => fs.readFile(path.join(workspace, "b.txt"), "utf8").catch(() => "")).toBe("my own edit\n");
});

test("the timeline reads as turns, with the actions in a menu", async ({ page }) => {
  const { id } = await newSession("review-timeline", { "t.txt": "1\n" });
  await scriptLlm(
    { toolCalls: [{ name: "write_file", arguments: { path: "t.txt", content: "2\n" } }] },
    { text: "Done once." },
    { text: "Nothing to change." },
  );
  const session = await open(page, id);
  await session.send("Bump t");
  await turnDone(page, 1);
  await session.send("Anything else?");
  await turnDone(page, 2);
  await page.getByTestId("toggle-timeline").click();
  const timeline = page.getByTestId("timeline-list");
  const turnRows = timeline.locator('[data-testid^="timeline-turn-"]:not([data-testid*="toggle"])');
  await expect(turnRows).toHaveCount(2);
  await expect(timeline.getByTestId("timeline-turn-1")).toContainText("Bump t");
  await expect(timeline.getByTestId("timeline-turn-1")).toContainText("1 file");
  // No row of buttons per checkpoint: one menu per turn, checkpoints folded inside.
  await expect(timeline.locator("button", { hasText: "Fork (worktree)" })).toHaveCount(0);
  await timeline.getByTestId("timeline-turn-toggle-1").click();
  await expect(timeline.getByTestId("timeline-turn-1").locator('[data-testid^="checkpoint-"]').first()).toBeVisible();
  await timeline.getByTestId("timeline-menu-1").click();
  await expect(page.getByRole("menuitem")).toHaveText([
    "Diff to now",
    "Rewind conversation + files",
    "Rewind conversation only",
    "Rewind files only",
    "Fork a new session here",
    "Fork onto a git worktree",
  ]);
  await shot(page, "timeline-turns");
  await page.getByTestId("menu-rewind-conversation").click();
  await expect(session.userMessages()).toHaveCount(0);
  await expect(page.getByTestId("rewind-notice-undo")).toBeVisible();
});

test("plan mode: Shift+Tab, the button and /plan switch it; the plan card approves or keeps planning", async ({
  page,
}) => {
  const { id, workspace } = await newSession("review-plan", { "app.txt": "v1\n" });
  const session = await open(page, id);
  const toggle = page.getByTestId("plan-toggle");
  await expect(toggle).toHaveAttribute("aria-pressed", "false");
  await page.getByTestId("prompt-input").press("Shift+Tab");
  await expect(toggle).toHaveAttribute("aria-pressed", "true");
  await toggle.click();
  await expect(toggle).toHaveAttribute("aria-pressed", "false");
  await session.send("/plan");
  await expect(toggle).toHaveAttribute("aria-pressed", "true");
  expect((await bridgeApi<{ mode: string }>(`/api/v1/sessions/${id}`)).mode).toBe("plan");

  const plan = "## Plan\n\n1. Change `app.txt` from v1 to v2.\n2. Check it with `cat app.txt`.";
  await scriptLlm(
    {
      toolCalls: [
        { name: "write_file", arguments: { path: "app.txt", content: "v2\n" } },
        { name: "shell", arguments: { command: "cat app.txt" } },
      ],
    },
    { toolCalls: [{ name: "propose_plan", arguments: { plan } }] },
    { text: "The plan is ready for your review." },
  );
  await session.send("Update the app to v2");
  await turnDone(page, 1);
  expect(await fs.readFile(path.join(workspace, "app.txt"), "utf8")).toBe("v1\n");
  await expect(page.locator('[data-testid="tool-card"][data-tool="write_file"]')).toContainText(
    "Refused: plan mode is on",
  );
  const card = page.getByTestId("plan-card");
  await expect(card).toBeVisible();
  await expect(card.getByTestId("plan-text")).toContainText("Change app.txt from v1 to v2.");
  await card.scrollIntoViewIfNeeded();
  await shot(page, "plan-card-dark");
  await page.setViewportSize({ width: 390, height: 844 });
  await card.scrollIntoViewIfNeeded();
  await shot(page, "plan-card-390-dark");
  await setTheme(page, "light");
  await shot(page, "plan-card-390-light");
  await setTheme(page, "dark");
  await page.setViewportSize({ width: 1280, height: 800 });

  // Keep planning: the buttons go, plan mode stays, the input takes the feedback.
  await card.getByTestId("plan-keep").click();
  await expect(card.getByTestId("plan-approve")).toHaveCount(0);
  await expect(page.getByTestId("prompt-input")).toBeFocused();
  await expect(toggle).toHaveAttribute("aria-pressed", "true");

  // A revised plan, approved: plan mode ends and the agent carries it out.
  await scriptLlm(
    { toolCalls: [{ name: "propose_plan", arguments: { plan: `${plan}\n3. Done.` } }] },
    { text: "Revised." },
    { toolCalls: [{ name: "write_file", arguments: { path: "app.txt", content: "v2\n" } }] },
    { text: "Updated app.txt to v2." },
  );
  await session.send("Also say when it is done");
  await turnDone(page, 2);
  const latest = page.getByTestId("plan-card").last();
  await latest.getByTestId("plan-approve").click();
  await expect(toggle).toHaveAttribute("aria-pressed", "false");
  await expect(session.userMessages().last()).toHaveText("The plan is approved. Carry it out.");
  await turnDone(page, 3);
  expect(await fs.readFile(path.join(workspace, "app.txt"), "utf8")).toBe("v2\n");
  await expect(latest).toContainText("Approved.");
});
