import fs from "node:fs/promises";
import path from "node:path";
import type { Page } from "@playwright/test";
import { SessionPage } from "./pages/session-page";
import { bridgeApi, e2e, expect, freshWorkspace, login, newSession, scriptLlm, test } from "./fixtures";

/**
 * Every flow with the keyboard alone — no click, no `fill`, no `focus()` from the test.
 * Setup that is not the flow under test (a session made through the API) is the only exception.
 */

/** Far more presses than any page needs between two controls: a missing control fails, it doesn't hang. */
const MAX_TAB_PRESSES = 60;

/** Presses Tab (or Shift+Tab) until the element matching `selector` has the focus; asserts it shows a focus ring. */
async function tabTo(page: Page, selector: string, backward = false): Promise<void> {
  for (let i = 0; i < MAX_TAB_PRESSES; i++) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) {
      await expectFocusRing(page);
      return;
    }
    await page.keyboard.press(backward ? "Shift+Tab" : "Tab");
  }
  throw new Error(`${MAX_TAB_PRESSES} ${backward ? "Shift+Tab" : "Tab"} presses did not reach ${selector}`);
}

const byTestId = (id: string) => `[data-testid="${id}"]`;

/** Focus is visible: the focused control draws an outline (globals.css `:focus-visible`). */
async function expectFocusRing(page: Page): Promise<void> {
  const outline = await page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    if (!element || !element.matches(":focus-visible")) return "not focus-visible";
    const style = getComputedStyle(element);
    return style.outlineStyle === "none" || style.outlineWidth === "0px" ? "no outline" : "outline";
  });
  expect(outline).toBe("outline");
}

/** Every text the session's live region announced, in order (recorded in the page). */
async function recordAnnouncements(page: Page): Promise<void> {
  await page.evaluate(() => {
    const region = document.querySelector('[data-testid="announcer"]');
    const said: string[] = [];
    (window as unknown as { __said: string[] }).__said = said;
    new MutationObserver(() => {
      const text = region?.textContent ?? "";
      if (text) said.push(text);
    }).observe(region!, { childList: true, subtree: true, characterData: true });
  });
}

function announcements(page: Page): Promise<string> {
  return page.evaluate(() => ((window as unknown as { __said?: string[] }).__said ?? []).join(" | "));
}

/** Ctrl and the key left of 1 as a non-US layout reports it: the same `code`, another `key` (a real key event). */
async function pressCtrlBackquoteAs(page: Page, key: string): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  const CTRL = 2;
  const event = { key, code: "Backquote", modifiers: CTRL, windowsVirtualKeyCode: 192 };
  await cdp.send("Input.dispatchKeyEvent", { type: "rawKeyDown", ...event });
  await cdp.send("Input.dispatchKeyEvent", { type: "keyUp", ...event });
  await cdp.detach();
}

/**
 * The layout is kept per user on the bridge, across specs: start each test with the tree shown and
 * the terminal panel closed (a panel restored open focuses its terminal as the page loads).
 */
async function resetLayout(): Promise<void> {
  const layout = {
    treeWidth: 240,
    agentWidth: 460,
    bottomHeight: 220,
    treeOpen: true,
    bottomOpen: false,
    theme: "dark",
  };
  await bridgeApi("/api/v1/settings/layout", layout, "PUT");
}

async function openSession(page: Page, id: string): Promise<SessionPage> {
  await resetLayout();
  await login(page);
  await page.evaluate(() => localStorage.removeItem("worldline.layout"));
  const session = new SessionPage(page);
  await session.goto(e2e.baseUrl, id);
  return session;
}

/** Ctrl+L, the prompt, typed and sent with Enter. */
async function prompt(page: Page, text: string): Promise<void> {
  await page.keyboard.press("Control+l");
  await expect(page.getByTestId("prompt-input")).toBeFocused();
  await page.keyboard.type(text);
  await page.keyboard.press("Enter");
}

async function turnDone(page: Page, count: number): Promise<void> {
  await expect(page.getByTestId("message-text")).toHaveCount(count, { timeout: 20_000 });
  await expect(page.getByTestId("stop-button")).toHaveCount(0);
}

test("open a folder and send a prompt; the reply is read out once, and can be read from the keyboard", async ({
  page,
}) => {
  await resetLayout();
  await login(page);
  const workspace = await freshWorkspace("kb-open");
  // The first Tab offers the skip link; it leads past the nav.
  await page.keyboard.press("Tab");
  await expect(page.getByTestId("skip-link")).toBeFocused();
  await expectFocusRing(page);
  await tabTo(page, byTestId("workspace-input"));
  await page.keyboard.type(workspace);
  await page.keyboard.press("Enter");
  await page.waitForURL(/\/s\/[^/]+$/);
  await new SessionPage(page).waitLive();
  await recordAnnouncements(page);

  await scriptLlm({ text: "Hello from the **keyboard**." });
  await prompt(page, "Say hello");
  await turnDone(page, 1);
  await expect(page.getByTestId("message-text")).toContainText("Hello from the keyboard.");
  // Announced politely and once: the answer when complete (not per token), then the turn's end.
  await expect.poll(() => announcements(page)).toContain("Turn finished.");
  const said = await announcements(page);
  expect(said.match(/Agent: Hello from the keyboard\./g)).toHaveLength(1);
  expect(said.match(/Turn finished\./g)).toHaveLength(1);
  await expect(page.getByTestId("announcer")).toHaveAttribute("aria-live", "polite");
  // The same words twice in a row are read twice: a turn with no answer to read says only "Turn finished." again.
  await scriptLlm({ text: " " });
  await prompt(page, "Nothing to say");
  await turnDone(page, 2);
  await expect.poll(async () => (await announcements(page)).match(/Turn finished\./g)?.length ?? 0).toBe(2);
  expect(await announcements(page)).toMatch(/Turn finished\. \| Turn finished\.$/);

  // The conversation takes focus, so arrows and Page Down scroll it: Tab from the files to it.
  await page.keyboard.press("Control+Shift+E");
  await expect(page.getByTestId("file-tree")).toBeFocused();
  await tabTo(page, byTestId("transcript"));
  await expect(page.getByRole("region", { name: "Conversation" })).toBeFocused();
});

test("approvals by keyboard: allow once, allow for the session, reject with feedback", async ({ page }) => {
  test.setTimeout(90_000);
  const { id, workspace } = await newSession("kb-approve", { yolo: false });
  await scriptLlm(
    { toolCalls: [{ name: "shell", arguments: { command: "touch one.txt" } }] },
    { toolCalls: [{ name: "shell", arguments: { command: "mkdir two" } }] },
    { toolCalls: [{ name: "shell", arguments: { command: "rm -f one.txt" } }] },
    { text: "Understood: I left one.txt alone." },
  );
  await openSession(page, id);
  await recordAnnouncements(page);
  await prompt(page, "Make the files");
  const waiting = page.locator('[data-testid="tool-card"][data-state="waiting_approval"]');

  // 1: allow once, reached backwards from the prompt.
  await expect(waiting).toHaveCount(1);
  await expect.poll(() => announcements(page)).toContain("Approval needed, ");
  await expect.poll(() => announcements(page)).toContain("shell: touch one.txt");
  await page.keyboard.press("Control+l");
  // Shift+Tab in the prompt is plan mode: the status bar's "1 pending approval" leads to the request.
  await tabTo(page, byTestId("status-approvals"));
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("approval-allow-once")).toBeFocused();
  await expectFocusRing(page);
  await page.keyboard.press("Enter");
  await expect(page.getByRole("group", { name: "shell: touch one.txt, approved, exit 0" })).toBeVisible();
  await expect
    .poll(() =>
      fs.access(path.join(workspace, "one.txt")).then(
        () => true,
        () => false,
      ),
    )
    .toBe(true);

  // 2: allow for the session.
  await expect(waiting).toHaveCount(1);
  await page.keyboard.press("Control+l");
  await tabTo(page, byTestId("status-approvals"));
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("approval-allow-once")).toBeFocused();
  await tabTo(page, byTestId("approval-allow-session"));
  await page.keyboard.press("Enter");
  await expect(page.getByRole("group", { name: /^shell: mkdir two, approved/ })).toBeVisible();

  // 3: reject with feedback: the note goes to the agent, which answers.
  await expect(waiting).toHaveCount(1);
  await page.keyboard.press("Control+l");
  await tabTo(page, byTestId("status-approvals"));
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("approval-allow-once")).toBeFocused();
  await tabTo(page, byTestId("approval-feedback"), true);
  await page.keyboard.type("Keep one.txt please");
  await expect(page.getByTestId("approval-reject")).toHaveText(/Reject with feedback/);
  await tabTo(page, byTestId("approval-reject"));
  await page.keyboard.press("Enter");
  await expect(page.getByRole("group", { name: /^shell: rm -f one\.txt, rejected/ })).toBeVisible();
  await turnDone(page, 1);
  await expect(page.getByTestId("message-text")).toContainText("I left one.txt alone");
  expect(await fs.readFile(path.join(workspace, "one.txt"), "utf8")).toBe("");
});

test("Changes view by keyboard: open it, pick the file, revert one hunk", async ({ page }) => {
  const before = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\ng = 7\nh = 8\ni = 9\nj = 10\n";
  const after = before.replace("a = 1", "a = 100").replace("j = 10", "j = 1000");
  const { id, workspace } = await newSession("kb-changes", { files: { "vars.txt": before } });
  await scriptLlm(
    { toolCalls: [{ name: "write_file", arguments: { path: "vars.txt", content: after } }] },
    { text: "Changed a and j." },
  );
  await openSession(page, id);
  await prompt(page, "Change a and j");
  await turnDone(page, 1);

  await page.keyboard.press("Control+Shift+G");
  const file = page.locator('[data-testid="changes-file"][data-path="vars.txt"]');
  await expect(file).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("hunk")).toHaveCount(2);
  await tabTo(page, byTestId("hunk-revert"));
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("hunk")).toHaveCount(1);
  await expect.poll(() => fs.readFile(path.join(workspace, "vars.txt"), "utf8")).toContain("a = 1\n");
  expect(await fs.readFile(path.join(workspace, "vars.txt"), "utf8")).toContain("j = 1000");
});

test("rewind from a message by keyboard; the timeline menu returns focus to its button", async ({ page }) => {
  const { id, workspace } = await newSession("kb-rewind", { files: { "a.txt": "a1\n" } });
  await scriptLlm(
    { toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "a2\n" } }] },
    { text: "First change done." },
    { toolCalls: [{ name: "write_file", arguments: { path: "b.txt", content: "b1\n" } }] },
    { text: "Second change done." },
  );
  await openSession(page, id);
  await prompt(page, "Change a");
  await turnDone(page, 1);
  await prompt(page, "Add b");
  await turnDone(page, 2);

  // The timeline's menu: opened with Enter on its first item, arrows move, Esc goes back to the button.
  await page.keyboard.press("Control+Shift+H");
  await expect(page.getByTestId("timeline-panel").locator(":focus")).toHaveCount(1);
  await tabTo(page, byTestId("timeline-menu-2"));
  await page.keyboard.press("Enter");
  await expect(page.getByRole("menuitem").first()).toBeFocused();
  await page.keyboard.press("ArrowDown");
  await expect(page.getByRole("menuitem").nth(1)).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(page.getByRole("menu")).toHaveCount(0);
  await expect(page.getByTestId("timeline-menu-2")).toBeFocused();
  await page.keyboard.press("Control+Shift+H");
  await expect(page.getByTestId("timeline-panel")).toHaveCount(0);

  // Rewind the first message: Tab from the files into the conversation reaches its Rewind; the panel takes the
  // keyboard, Esc gives it back, and the second time it rewinds.
  await page.keyboard.press("Control+Shift+E");
  await tabTo(page, byTestId("message-rewind"));
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("rewind-panel")).toBeFocused();
  await expect(page.getByTestId("rewind-file")).toHaveCount(2);
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("rewind-panel")).toHaveCount(0);
  await expect(page.getByTestId("message-rewind").first()).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("rewind-panel")).toBeFocused();
  await tabTo(page, byTestId("rewind-confirm"));
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("message-user")).toHaveCount(0);
  await expect.poll(() => fs.readFile(path.join(workspace, "a.txt"), "utf8")).toBe("a1\n");
  await expect
    .poll(() =>
      fs.access(path.join(workspace, "b.txt")).then(
        () => "there",
        () => "gone",
      ),
    )
    .toBe("gone");
});

test("the terminal by keyboard: Ctrl+` goes in, typing runs, Ctrl+` comes back out", async ({ page }) => {
  const { id } = await newSession("kb-terminal");
  await openSession(page, id);
  await page.keyboard.press("Control+l");
  await page.keyboard.press("Control+Backquote");
  const view = page.getByTestId("terminal-view");
  await expect(view).toHaveAttribute("data-status", "live");
  await expect(view.locator(".xterm-helper-textarea")).toBeFocused();
  const terminalId = (await view.getAttribute("data-terminal-id"))!;
  await page.keyboard.type("echo keyboard-$((20+22))");
  await page.keyboard.press("Enter");
  await expect
    .poll(() => page.evaluate((tid) => window.worldlineTerminalText?.(tid) ?? "", terminalId))
    .toContain("keyboard-42");
  // Tab belongs to the shell (completion); Ctrl+` is the way out, to the prompt, and the input says so.
  const input = view.locator(".xterm-helper-textarea");
  await page.keyboard.press("Tab");
  await expect(input).toBeFocused();
  await expect(input).toHaveAccessibleDescription(/Control\+Backquote/);
  // Where that key types no "`" (German: a dead key, French: "²") it works by its place on the keyboard.
  await pressCtrlBackquoteAs(page, "Dead");
  await expect(page.getByTestId("prompt-input")).toBeFocused();
  await pressCtrlBackquoteAs(page, "²");
  await expect(input).toBeFocused();
  await page.keyboard.press("Control+Backquote");
  await expect(page.getByTestId("prompt-input")).toBeFocused();
  // Ctrl+J hides the panel again.
  await page.keyboard.press("Control+j");
  await expect(page.getByTestId("terminal-panel")).toHaveCount(0);
  // A page that opens with the panel restored does not start the keyboard inside the terminal.
  await page.keyboard.press("Control+j");
  await expect(view).toHaveAttribute("data-status", "live");
  await page.reload();
  await expect(page.getByTestId("terminal-view")).toHaveAttribute("data-status", "live");
  await expect(page.locator(".xterm-helper-textarea")).not.toBeFocused();
  await page.keyboard.press("Tab");
  await expect(page.getByTestId("skip-link")).toBeFocused();
});

test("the file tree by keyboard: open a file, edit and save it; ignored files on request", async ({ page }) => {
  const { id, workspace } = await newSession("kb-tree", {
    files: { "src/app.txt": "hello\n", ".gitignore": "*.log\n", "debug.log": "noise\n", "dist/out.js": "x\n" },
  });
  await openSession(page, id);
  await page.keyboard.press("Control+Shift+E");
  const tree = page.getByRole("tree", { name: "Workspace files" });
  // dist/ is not git-ignored here: it shows; debug.log is, and doesn't.
  await expect(tree.locator('[data-path="dist"]')).toBeVisible();
  await expect(tree.locator('[data-path="debug.log"]')).toHaveCount(0);
  await expect(tree.locator('[data-path="dist"]')).toBeFocused();
  await page.keyboard.press("ArrowDown");
  await expect(tree.locator('[data-path="src"]')).toBeFocused();
  await page.keyboard.press("ArrowRight");
  await expect(tree.locator('[data-path="src"]')).toHaveAttribute("aria-expanded", "true");
  await expect(tree.locator('[data-path="src/app.txt"]')).toBeVisible();
  await page.keyboard.press("ArrowDown");
  await expect(tree.locator('[data-path="src/app.txt"]')).toBeFocused();
  await page.keyboard.press("Enter");
  const editor = page.locator('[data-testid="code-editor"][data-path="src/app.txt"]');
  await expect(editor).toBeVisible();
  await tabTo(page, '[data-testid="code-editor"] .cm-content');
  await page.keyboard.press("Control+End");
  await page.keyboard.type("saved by keyboard\n");
  await page.keyboard.press("Control+s");
  await expect.poll(() => fs.readFile(path.join(workspace, "src/app.txt"), "utf8")).toBe("hello\nsaved by keyboard\n");
  // Back to its tab (Shift+Tab leaves the editor: it does not take Tab) and Delete closes it.
  await tabTo(page, byTestId("editor-tab"), true);
  await page.keyboard.press("Delete");
  await expect(editor).toHaveCount(0);

  // Show ignored: git-ignored files appear, marked; .git never does.
  await page.keyboard.press("Control+Shift+E");
  await tabTo(page, byTestId("tree-show-ignored"), true);
  await page.keyboard.press("Enter");
  await expect(tree.locator('[data-path="debug.log"]')).toHaveAttribute("data-ignored", "true");
  await expect(tree.locator('[data-path=".git"]')).toHaveCount(0);
});

test("plan mode by keyboard: Shift+Tab in the prompt, or the button", async ({ page }) => {
  const { id } = await newSession("kb-plan");
  await openSession(page, id);
  const toggle = page.getByTestId("plan-toggle");
  await expect(toggle).toHaveAttribute("aria-pressed", "false");
  await page.keyboard.press("Control+l");
  await page.keyboard.press("Shift+Tab");
  await expect(toggle).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByTestId("prompt-input")).toBeFocused();
  await tabTo(page, byTestId("plan-toggle"));
  await page.keyboard.press("Space");
  await expect(toggle).toHaveAttribute("aria-pressed", "false");
  expect((await bridgeApi<{ mode: string }>(`/api/v1/sessions/${id}`)).mode).toBe("default");
});

test("? lists the shortcuts in a dialog; Esc closes it and gives focus back", async ({ page }) => {
  await resetLayout();
  await login(page);
  await tabTo(page, byTestId("workspace-input"));
  await page.keyboard.press("Shift+Tab");
  const back = await page.evaluate(() => document.activeElement?.getAttribute("data-testid") ?? "");
  await page.keyboard.press("?");
  const dialog = page.getByRole("dialog", { name: "Keyboard shortcuts" });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText("Ctrl+`");
  await expect(dialog).toContainText("/help");
  await page.keyboard.press("Escape");
  await expect(dialog).toHaveCount(0);
  expect(await page.evaluate(() => document.activeElement?.getAttribute("data-testid") ?? "")).toBe(back);
});

/** Tab and Shift+Tab stay inside the open dialog (the page behind is inert). */
async function expectFocusTrapped(page: Page, presses: number): Promise<void> {
  for (let i = 0; i < presses; i++) {
    await page.keyboard.press(i % 3 === 2 ? "Shift+Tab" : "Tab");
    expect(await page.evaluate(() => document.activeElement?.closest("dialog[open]") !== null)).toBe(true);
  }
}

test("the board by keyboard: New agent starts an agent, a card's dialog traps focus, Esc closes it", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await login(page);
  const folder = await freshWorkspace("kb-board");
  await scriptLlm({ text: "Hello from the board." });
  await page.goto(`${e2e.baseUrl}/board`);
  await expect(page.getByTestId("board-page")).toBeVisible();

  await tabTo(page, byTestId("new-agent"));
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("agent-prompt")).toBeFocused();
  await expectFocusTrapped(page, 12);
  // Esc closes the dialog and gives the keyboard back to the button that opened it.
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("new-agent-dialog")).toHaveCount(0);
  await expect(page.getByTestId("new-agent")).toBeFocused();

  await page.keyboard.press("Enter");
  await expect(page.getByTestId("agent-prompt")).toBeFocused();
  // The folder field takes the most recent folder once the lists come: typed before, the two mixed.
  await expect(page.getByTestId("new-agent-dialog").locator("form")).toHaveAttribute("data-loaded", "true");
  await page.keyboard.type("Say hello");
  await page.keyboard.press("Tab");
  await expect(page.getByTestId("agent-folder")).toBeFocused();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.type(folder);
  // Not a repository: isolation off, with Space on the switch.
  await tabTo(page, byTestId("agent-isolation"));
  await page.keyboard.press("Space");
  await expect(page.getByTestId("agent-isolation")).not.toBeChecked();
  await tabTo(page, byTestId("agent-start"));
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("new-agent-dialog")).toHaveCount(0, { timeout: 30_000 });

  const sessions = await bridgeApi<{ id: string; workspace: string }[]>("/api/v1/sessions");
  const id = sessions.find((row) => row.workspace === folder)?.id;
  expect(id).toBeTruthy();
  const mine = page.locator(`[data-testid="board-card"][data-session="${id}"]`);
  await expect(mine).toHaveAttribute("data-state", "idle", { timeout: 30_000 });
  await expect(mine.getByTestId("card-activity")).toBeVisible();

  // The card's Archive, its dialog (focus inside, on its action), Esc, then archive for real.
  const archive = `[data-session="${id}"] ${byTestId("card-archive")}`;
  await tabTo(page, archive);
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("archive-submit")).toBeFocused();
  await expectFocusTrapped(page, 6);
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("archive-dialog")).toHaveCount(0);
  await expect(page.locator(archive)).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("archive-submit")).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("archive-result")).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.locator(`[data-testid="board-card"][data-session="${id}"]`)).toHaveCount(0);
});
