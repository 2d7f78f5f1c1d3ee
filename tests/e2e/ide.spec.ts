import fs from "node:fs/promises";
import path from "node:path";
import { IdePage } from "./pages/ide-page";
import { SettingsPage } from "./pages/settings-page";
import { bridgeApi, e2e, expect, freshWorkspace, login, scriptLlm, test } from "./fixtures";
import { plainText } from "../support/model-text";

async function projectWithFiles(name: string): Promise<string> {
  const dir = await freshWorkspace(name);
  await fs.mkdir(path.join(dir, "src"), { recursive: true });
  await fs.mkdir(path.join(dir, "node_modules/left-pad"), { recursive: true });
  await fs.writeFile(path.join(dir, ".gitignore"), "*.log\n");
  await fs.writeFile(path.join(dir, "src/app.ts"), "export function add(a: number, b: number) {\n  return a + b;\n}\n");
  await fs.writeFile(path.join(dir, "src/math-utils.ts"), "export const PI = 3.14;\n");
  await fs.writeFile(path.join(dir, "debug.log"), "noise\n");
  await fs.writeFile(path.join(dir, "node_modules/left-pad/index.js"), "module.exports = 1;\n");
  return dir;
}

async function newSession(workspace: string, title: string): Promise<string> {
  const session = await bridgeApi<{ id: string }>("/api/v1/sessions", { workspace, title });
  return session.id;
}

test.beforeEach(async ({ page }) => {
  // The layout is kept on the server for every tab: start each test from the default one, whatever the
  // specs before it left (a light theme, an open terminal panel).
  await bridgeApi(
    "/api/v1/settings/layout",
    { treeWidth: 240, agentWidth: 460, bottomHeight: 220, treeOpen: true, bottomOpen: false, theme: "dark" },
    "PUT",
  );
  await login(page);
});

test("a whole task: the agent edits, the diff and the file appear live, the user edits and saves", async ({ page }) => {
  const workspace = await projectWithFiles("ide-task");
  const sessionId = await newSession(workspace, "IDE task");
  await bridgeApi(`/api/v1/sessions/${sessionId}`, { yolo: true }, "PATCH");
  const ide = new IdePage(page);
  await ide.goto(e2e.baseUrl, sessionId);

  // The tree hides only what git ignores: debug.log; node_modules is not in this .gitignore.
  await expect(ide.treeItem("src")).toBeVisible();
  await expect(ide.treeItem(".gitignore")).toBeVisible();
  await expect(ide.treeItem("node_modules")).toBeVisible();
  await expect(ide.treeItem("debug.log")).toHaveCount(0);

  await scriptLlm(
    {
      toolCalls: [
        {
          name: "write_file",
          arguments: { path: "src/greet.ts", content: "export const greet = (n: string) => `hi ${n}`;\n" },
        },
      ],
    },
    {
      text: "Created `src/greet.ts`:\n\n```ts\nexport const greet = (n: string) => `hi ${n}`;\n```\n\nAll **done**.",
      chunkSize: 8,
      delayMs: 5,
    },
  );
  await ide.send("Add a greet helper");
  const card = ide.toolCards().filter({ hasText: "write_file" });
  await expect(card).toHaveAttribute("data-state", "completed");
  await expect(card.getByTestId("tool-diff")).toContainText("+export const greet");
  await expect(page.getByTestId("message-text").last()).toContainText("All done");
  await expect(page.locator(".wl-markdown pre code.hljs").last()).toBeVisible();
  // The watcher put the new file in the tree without a reload.
  await ide.page.getByTestId("send-button").waitFor();
  if ((await ide.treeItem("src").getAttribute("aria-expanded")) !== "true") await ide.treeItem("src").click();
  await expect(ide.treeItem("src/greet.ts")).toBeVisible();
  await ide.shot("task-dark");

  // Open the agent's diff in the editor area, then the session's changes.
  await card.getByTestId("open-diff").click();
  await expect(page.getByTestId("diff-tab")).toContainText("+export const greet");
  await page.getByTestId("open-changes").click();
  await expect(page.getByTestId("session-changes")).toContainText("src/greet.ts");

  // The user edits a file and saves with Ctrl+S.
  await ide.openFile("src/app.ts");
  await ide.typeInEditor("src/app.ts", "// edited by hand\n");
  await expect(page.getByTestId("dirty-dot")).toBeVisible();
  await page.keyboard.press("ControlOrMeta+s");
  await expect(page.getByTestId("dirty-dot")).toHaveCount(0);
  expect(await fs.readFile(path.join(workspace, "src/app.ts"), "utf8")).toContain("// edited by hand");

  // A change on disk under unsaved edits raises a conflict instead of losing either side.
  await ide.typeInEditor("src/app.ts", "// unsaved\n");
  await fs.writeFile(path.join(workspace, "src/app.ts"), "changed on disk\n");
  await expect(page.getByTestId("editor-conflict")).toBeVisible();
  await page.getByTestId("conflict-reload").click();
  await expect(ide.editor("src/app.ts")).toContainText("changed on disk");
  await ide.shot("editor-dark");
});

test("input: @ mentions, / commands, history, status bar", async ({ page }) => {
  const workspace = await projectWithFiles("ide-input");
  const sessionId = await newSession(workspace, "IDE input");
  const ide = new IdePage(page);
  await ide.goto(e2e.baseUrl, sessionId);

  await ide.input().fill("look at @mathut");
  await expect(page.getByTestId("mention-menu")).toContainText("src/math-utils.ts");
  await ide.input().press("Enter");
  await expect(ide.input()).toHaveValue("look at @src/math-utils.ts ");

  await ide.input().fill("/");
  await expect(page.getByTestId("slash-menu")).toContainText("/compact");
  await ide.input().fill("/help");
  await ide.input().press("Escape");
  await ide.send("/help");
  // One list of shortcuts and commands: a dialog; Esc gives the keyboard back to the prompt.
  await expect(page.getByTestId("shortcuts-dialog")).toContainText("/undo");
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("shortcuts-dialog")).not.toBeVisible();
  await expect(ide.input()).toBeFocused();
  await ide.send("/yolo");
  await expect(ide.notice()).toContainText("Yolo on");
  await expect(ide.statusBar()).toContainText("yolo");

  await scriptLlm({ text: "Answer to the first prompt" });
  await ide.send("first prompt");
  await expect(page.getByTestId("message-text").last()).toContainText("Answer to the first prompt");
  await ide.input().press("ArrowUp");
  await expect(ide.input()).toHaveValue("first prompt");
  await expect(ide.statusBar()).toContainText("fake-model");
  await expect(page.getByTestId("connection-state")).toContainText("live");
  await expect(page.getByTestId("status-approvals")).toContainText("0 pending");

  // Shell mode (Ctrl+X) runs the line in the session's terminal.
  await ide.input().press("Control+x");
  await expect(page.getByTestId("shell-toggle")).toHaveAttribute("aria-pressed", "true");
  await ide.send("echo shell-mode-$((40+2))");
  await expect(ide.notice()).toContainText("Sent to the session terminal");
  await page.getByTestId("toggle-terminal").click();
  await expect(page.getByTestId("bottom-panel")).toContainText("Terminal 1");
  // The command ran before the panel was open; the terminal shows it from the bridge's snapshot.
  const terminal = page.getByTestId("terminal-view");
  await expect(terminal).toHaveAttribute("data-status", "live");
  const terminalId = (await terminal.getAttribute("data-terminal-id"))!;
  await expect
    .poll(() => page.evaluate((id) => window.worldlineTerminalText?.(id) ?? "", terminalId))
    .toContain("shell-mode-42");
  expect(await ide.litPixels(terminal.locator(".xterm-screen"))).toBeGreaterThan(200);
  await ide.shot("terminal");
});

test("layout and theme persist on the server; the page works at phone width", async ({ page, browser }) => {
  const workspace = await projectWithFiles("ide-layout");
  const sessionId = await newSession(workspace, "IDE layout");
  const ide = new IdePage(page);
  await ide.goto(e2e.baseUrl, sessionId);
  await page.getByTestId("toggle-theme").click();
  await expect(page.locator("html")).toHaveAttribute("data-theme", "light");
  await page.getByTestId("toggle-tree").click();
  await expect(page.getByTestId("tree-panel")).toHaveCount(0);
  await expect
    .poll(
      async () =>
        (await bridgeApi<{ layout: { theme?: string; treeOpen: boolean } | null }>("/api/v1/settings/layout")).layout,
    )
    .toMatchObject({ theme: "light", treeOpen: false });

  // Another browser profile (no localStorage) gets the same layout from the server.
  const other = await browser.newContext();
  const otherPage = await other.newPage();
  await login(otherPage);
  await new IdePage(otherPage).goto(e2e.baseUrl, sessionId);
  await expect(otherPage.locator("html")).toHaveAttribute("data-theme", "light");
  await expect(otherPage.getByTestId("tree-panel")).toHaveCount(0);
  await page.getByTestId("toggle-tree").click();
  await scriptLlm({ text: "# Plan\n\n- read `src/app.ts`\n- add tests\n\n```ts\nconst x: number = 1;\n```" });
  await ide.send("plan it");
  await expect(page.getByTestId("message-text").last()).toContainText("add tests");
  await ide.shot("light");

  await otherPage.setViewportSize({ width: 390, height: 800 });
  await expect(otherPage.getByTestId("pane-tabs")).toBeVisible();
  await expect(otherPage.getByTestId("message-text").last()).toContainText("add tests");
  await otherPage.screenshot({ path: "/tmp/ide-phone.png" });
  await otherPage.getByTestId("pane-files").click();
  await expect(otherPage.getByTestId("file-tree")).toBeVisible();
  await other.close();

  await page.getByTestId("toggle-theme").click();
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
});

test("settings: add a provider with a key that never comes back, pick the default model, test connection", async ({
  page,
}) => {
  const settings = new SettingsPage(page);
  await settings.goto(e2e.baseUrl);
  await expect(page.getByTestId("env-model")).toContainText("fake-model");
  await settings.addProvider({ kind: "deepseek", key: "sk-e2e-secret-9876", model: "deepseek-chat" });
  await expect(settings.providers().filter({ hasText: "DeepSeek" })).toContainText("key sk-…9876");
  expect(await page.content()).not.toContain("sk-e2e-secret-9876");
  await page.getByTestId("default-model").selectOption({ label: "deepseek-chat — DeepSeek" });
  await page.reload();
  await expect(page.getByTestId("default-model")).toHaveValue("deepseek::deepseek-chat");

  // Test connection against the fake LLM as an OpenAI-compatible server.
  await page.getByTestId("add-provider").click();
  await page.getByTestId("provider-kind").selectOption("openai_compatible");
  const fakeBase = e2e.fakeUrl.replace(/\/$/, "");
  await page.getByTestId("provider-url").fill(fakeBase.endsWith("/v1") ? fakeBase : `${fakeBase}/v1`);
  await page.getByTestId("provider-test").click();
  await expect(page.getByTestId("test-result")).toContainText("Connected");
  await page.screenshot({ path: "/tmp/ide-settings.png", fullPage: true });
});

test("session list: grouped by workspace, search, rename, archive, delete with confirmation", async ({ page }) => {
  const workspace = await freshWorkspace("ide-home");
  const id = await newSession(workspace, "Zebra refactor");
  await newSession(workspace, "Other work");
  await page.goto(e2e.baseUrl);
  const row = page.locator(`[data-testid="session-row"][data-session="${id}"]`);
  await expect(row).toContainText("Zebra refactor");
  await page.getByTestId("session-search").fill("zebra");
  await expect(page.getByTestId("session-row")).toHaveCount(1);
  await row.getByTestId("rename-session").click();
  await row.getByTestId("rename-input").fill("Zebra parser");
  await row.getByTestId("rename-input").press("Enter");
  await expect(row).toContainText("Zebra parser");
  await page.screenshot({ path: "/tmp/ide-home.png" });
  await row.getByTestId("archive-session").click();
  await expect(row).toHaveCount(0);
  await page.getByTestId("show-archived").check();
  await expect(row).toContainText("archived");
  await row.getByTestId("delete-session").click();
  await row.getByTestId("confirm-delete").click();
  await expect(row).toHaveCount(0);
});

/** A real 1×1 PNG and a real 1×1 GIF. */
const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const GIF_BASE64 = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";

test("images: paste, drop and attach show thumbnails that can be removed; the model gets the image, the transcript shows it", async ({
  page,
}) => {
  const sessionId = await newSession(await freshWorkspace("ide-images"), "Images");
  const ide = new IdePage(page);
  await ide.goto(e2e.baseUrl, sessionId);

  // A pasted screenshot (a synthetic ClipboardEvent carrying a file) becomes an attachment.
  await ide.input().evaluate((el, base64) => {
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], "pixel.png", { type: "image/png" }));
    el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, PNG_BASE64);
  await expect(ide.attachments()).toHaveCount(1);
  // The attach button's file input adds more; the remove button takes one away again.
  await expect(page.getByTestId("attach-button")).toBeVisible();
  await page
    .getByTestId("attach-input")
    .setInputFiles({ name: "dot.gif", mimeType: "image/gif", buffer: Buffer.from(GIF_BASE64, "base64") });
  await expect(ide.attachments()).toHaveCount(2);
  // A file dropped on the input area is attached too.
  await page.getByTestId("prompt").evaluate((el, base64) => {
    const data = new DataTransfer();
    data.items.add(
      new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], "dropped.gif", { type: "image/gif" }),
    );
    el.dispatchEvent(new DragEvent("dragover", { dataTransfer: data, bubbles: true, cancelable: true }));
    el.dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
  }, GIF_BASE64);
  await expect(ide.attachments()).toHaveCount(3);
  await ide.shot("attachments");
  await ide.attachments().last().getByTestId("attachment-remove").click();
  await ide.attachments().last().getByTestId("attachment-remove").click();
  await expect(ide.attachments()).toHaveCount(1);

  await fetch(new URL("/__admin/reset", e2e.fakeUrl), { method: "POST" });
  await scriptLlm({ text: "A single pixel." });
  await ide.send("What is in this picture?");
  await expect(page.getByTestId("message-text").last()).toContainText("A single pixel.");
  await expect(ide.attachments()).toHaveCount(0);
  const shown = page.getByTestId("message-user").last().getByTestId("message-image");
  await expect(shown).toHaveCount(1);
  await expect(shown).toHaveAttribute("src", /^data:image\/(webp|jpeg);base64,/);

  const requests = (await (await fetch(new URL("/__admin/requests", e2e.fakeUrl))).json()) as {
    body: { messages: { role: string; content: unknown }[] };
  }[];
  const parts = requests.at(-1)!.body.messages.find((m) => m.role === "user" && Array.isArray(m.content))?.content as {
    type: string;
    text?: string;
  }[];
  // The text part also carries the turn's <context> block (and markers with D-Mail); compare the user's words.
  const words = parts.map((part) => (part.type === "text" ? { ...part, text: plainText(part.text ?? "") } : part));
  expect(words).toEqual([
    { type: "text", text: "What is in this picture?" },
    { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
  ]);
});

test("terminal: typed commands run and their output is drawn in the browser", async ({ page }) => {
  const sessionId = await newSession(await freshWorkspace("ide-terminal"), "Terminal");
  const ide = new IdePage(page);
  await ide.goto(e2e.baseUrl, sessionId);
  const terminal = await ide.openTerminal();
  const id = (await terminal.getAttribute("data-terminal-id"))!;
  // Type once the shell has printed its prompt, as a person would.
  await expect
    .poll(() => page.evaluate((tid) => (window.worldlineTerminalText?.(tid) ?? "").trim().length, id))
    .toBeGreaterThan(0);
  await terminal.locator(".xterm").click();
  await page.keyboard.type("echo hello-$((6*7))");
  await page.keyboard.press("Enter");
  await expect.poll(() => page.evaluate((tid) => window.worldlineTerminalText?.(tid) ?? "", id)).toContain("hello-42");
  // The buffer is not the screen: the text must also be drawn. The DOM renderer keeps rows
  // in .xterm-rows; the WebGL one draws on a canvas, so count the lit pixels of a screenshot.
  const rows = await terminal.locator(".xterm-rows").allInnerTexts();
  if (rows.join("").trim()) expect(rows.join("\n")).toContain("hello-42");
  const lit = await ide.litPixels(terminal.locator(".xterm-screen"));
  expect(lit).toBeGreaterThan(200);
  await ide.shot("terminal-output");
});

test("a terminal that opens while the prompt has the keyboard leaves it there: the whole prompt reaches the model", async ({
  page,
}) => {
  const sessionId = await newSession(await freshWorkspace("ide-terminal-focus"), "Terminal focus");
  const ide = new IdePage(page);
  await ide.goto(e2e.baseUrl, sessionId);
  await scriptLlm({ text: "Heard all of it." });
  await ide.input().click();
  await page.keyboard.type("the first half");
  // Ctrl+J opens the panel, which starts a terminal for the session: it appears while the prompt has the keyboard.
  await page.keyboard.press("Control+j");
  await expect(page.getByTestId("terminal-view")).toHaveAttribute("data-status", "live");
  await page.keyboard.type(" and the rest");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("message-text").last()).toContainText("Heard all of it.");
  const requests = (await (await fetch(new URL("/__admin/requests", e2e.fakeUrl))).json()) as {
    body: { messages: { role: string; content: unknown }[] };
  }[];
  const prompt = requests.at(-1)!.body.messages.findLast((m) => m.role === "user")!.content as string;
  expect(plainText(prompt)).toBe("the first half and the rest");
});
