import type { Page } from "@playwright/test";
import { IdePage } from "./pages/ide-page";
import { SessionPage } from "./pages/session-page";
import { bridgeApi, e2e, expect, freshWorkspace, login, scriptLlm, test } from "./fixtures";

function terminalText(page: Page, terminalId: string): Promise<string> {
  return page.evaluate((id) => window.worldlineTerminalText?.(id) ?? "", terminalId);
}

/** A guest page opened through a share link: it lands on the session and follows it live. */
async function openLink(page: Page, path: string, sessionId: string): Promise<SessionPage> {
  await page.goto(`${e2e.baseUrl}${path}`);
  await expect(page).toHaveURL(new RegExp(`/s/${sessionId}$`));
  const session = new SessionPage(page);
  await session.waitLive();
  return session;
}

/** What acts on the session beyond prompting and deciding, by who may do it (server/sharing/policy.ts). */
const OWNER_ONLY = [
  "changes-accept-all",
  "file-accept",
  "file-revert",
  "hunk-accept",
  "hunk-revert",
  "timeline-dmail-files",
  "menu-fork",
  "menu-fork-worktree",
];
const DRIVE = [
  "message-rewind",
  "timeline-undo-turn",
  "timeline-undo-rewind",
  "menu-rewind-both",
  "menu-rewind-conversation",
  "menu-rewind-files",
];

/**
 * Opens the Changes view and the timeline's menu of turn 1 on `page` and checks that exactly the
 * controls in `shown` (of OWNER_ONLY and DRIVE) are there; anyone may read the diff.
 */
async function expectSessionControls(page: Page, shown: string[]): Promise<void> {
  const expectControl = async (testId: string) => {
    if (shown.includes(testId)) await expect(page.getByTestId(testId).first()).toBeVisible();
    else await expect(page.getByTestId(testId)).toHaveCount(0);
  };
  await expect(page.getByTestId("message-user")).toHaveCount(1);
  await expectControl("message-rewind");
  await page.getByTestId("toggle-changes").click();
  await expect(page.getByTestId("hunk")).toHaveCount(1);
  for (const testId of ["changes-accept-all", "file-accept", "file-revert", "hunk-accept", "hunk-revert"])
    await expectControl(testId);
  await page.getByTestId("toggle-changes").click();
  await page.getByTestId("toggle-timeline").click();
  await expect(page.getByTestId("timeline-turn-1")).toBeVisible();
  for (const testId of ["timeline-undo-turn", "timeline-undo-rewind", "timeline-dmail-files"])
    await expectControl(testId);
  await page.getByTestId("timeline-menu-1").click();
  await expect(page.getByTestId("menu-diff")).toBeVisible();
  for (const testId of [
    "menu-rewind-both",
    "menu-rewind-conversation",
    "menu-rewind-files",
    "menu-fork",
    "menu-fork-worktree",
  ])
    await expectControl(testId);
  await page.keyboard.press("Escape");
  await page.getByTestId("toggle-timeline").click();
}

test("a view link shows a waiting approval with who decides it and no control, and a read-only terminal; a drive link decides", async ({
  browser,
}) => {
  const workspace = await freshWorkspace("share-access");
  const { id: sessionId } = await bridgeApi<{ id: string }>("/api/v1/sessions", { workspace, title: "Access e2e" });
  const link = (scope: "view" | "drive") =>
    bridgeApi<{ path: string }>(`/api/v1/sessions/${sessionId}/share-links`, { scope, expires_in: 3600 });
  const [viewLink, driveLink] = await Promise.all([link("view"), link("drive")]);

  const ownerContext = await browser.newContext();
  const owner = await ownerContext.newPage();
  await login(owner);
  const ownerIde = new IdePage(owner);
  await ownerIde.goto(e2e.baseUrl, sessionId);
  const terminal = await ownerIde.openTerminal();
  const terminalId = (await terminal.getAttribute("data-terminal-id")) as string;

  const viewer = await (await browser.newContext()).newPage();
  await openLink(viewer, viewLink.path, sessionId);
  await expect(viewer.getByTestId("shared-access")).toContainText("view only");

  // An approval waits: the viewer sees it, who decides it, and nothing to decide it with.
  const command = `echo shared > shared-${Date.now()}.txt`;
  await scriptLlm({ toolCalls: [{ name: "shell", arguments: { command } }] }, { text: "Made it." });
  await new SessionPage(owner).send("Create the file");
  const waiting = viewer.getByTestId("tool-card").last();
  await expect(waiting).toHaveAttribute("data-state", "waiting_approval");
  const card = waiting.getByTestId("approval-card");
  await expect(card.getByTestId("approval-description")).toBeVisible();
  await expect(card.getByTestId("approval-waiting")).toContainText("the session's owner or someone with drive access");
  for (const control of [
    "approval-allow-once",
    "approval-allow-session",
    "approval-reject",
    "approval-feedback",
    "approval-actions",
    "approval-password",
  ])
    await expect(viewer.getByTestId(control)).toHaveCount(0);
  // The owner's page still has every control.
  await expect(owner.getByTestId("approval-allow-once")).toBeVisible();
  // Keys that decide on the owner's pages do nothing here.
  await viewer.locator("body").click({ position: { x: 1, y: 1 } });
  await viewer.keyboard.press("a");
  const pending = await bridgeApi<{ approval_id: string; session_id: string }[]>(
    `/api/v1/approvals?status=pending&session_id=${sessionId}`,
  );
  expect(pending).toHaveLength(1);
  await expect(waiting).toHaveAttribute("data-state", "waiting_approval");

  // The viewer's terminal shows the owner's output and takes no input, and offers no new terminal.
  // The layout is the user's (the owner just opened the panel): open it only if it is closed.
  const toggle = viewer.getByTestId("toggle-terminal");
  if ((await toggle.getAttribute("aria-pressed")) !== "true") await toggle.click();
  const viewerTerminal = viewer.getByTestId("terminal-view");
  await expect(viewerTerminal).toHaveAttribute("data-read-only", "true");
  await expect(viewerTerminal).toHaveAttribute("data-status", "live");
  await expect(viewer.getByTestId("terminal-read-only")).toBeVisible();
  await expect(viewer.getByTestId("terminal-new")).toHaveCount(0);
  await expect(viewer.getByTestId("terminal-tab-close")).toHaveCount(0);
  await owner.getByTestId("terminal-host").click();
  await owner.keyboard.type("echo from-$((40+2))-owner\n");
  await expect.poll(() => terminalText(viewer, terminalId)).toContain("from-42-owner");
  await viewer.getByTestId("terminal-host").click();
  await viewer.keyboard.type("echo from-$((40+3))-viewer\n");
  await owner.keyboard.type("echo owner-$((40+4))-done\n");
  await expect.poll(() => terminalText(owner, terminalId)).toContain("owner-44-done");
  expect(await terminalText(owner, terminalId)).not.toContain("from-43-viewer");

  // A drive link keeps today's controls and decides.
  const driver = await (await browser.newContext()).newPage();
  await openLink(driver, driveLink.path, sessionId);
  await expect(driver.getByTestId("shared-access")).toContainText("can drive");
  await driver.getByTestId("approval-allow-once").click();
  await expect(waiting).toHaveAttribute("data-state", "completed");
  await expect(viewer.getByTestId("message-text").last()).toContainText("Made it.");
  await expect(driver.getByTestId("stop-button")).toHaveCount(0);

  // Rewind, review and the timeline render from the page's access too: the bridge would refuse the rest.
  await expectSessionControls(owner, [...OWNER_ONLY, ...DRIVE]);
  await expectSessionControls(driver, DRIVE);
  await expectSessionControls(viewer, []);
  await ownerContext.close();
});
