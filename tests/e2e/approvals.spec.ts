import { ApprovalsPage } from "./pages/approvals-page";
import { SessionPage } from "./pages/session-page";
import { bridgeApi, e2e, expect, freshWorkspace, login, scriptLlm, test } from "./fixtures";

test("a request appears live on /approvals in one tab, is approved there, and the session tab shows the result", async ({
  browser,
}) => {
  const context = await browser.newContext();
  const tabA = await context.newPage();
  const tabB = await context.newPage();
  await login(tabA);

  const workspace = await freshWorkspace("approvals");
  const { id: sessionId } = await bridgeApi<{ id: string }>("/api/v1/sessions", { workspace, title: "Approvals e2e" });
  const approvals = new ApprovalsPage(tabA);
  await approvals.goto(e2e.baseUrl);
  const session = new SessionPage(tabB);
  await session.goto(e2e.baseUrl, sessionId);

  const command = `touch approved-${Date.now()}.txt`;
  await scriptLlm(
    { toolCalls: [{ name: "shell", arguments: { command } }] },
    { text: "Created the file after your approval." },
  );
  await session.send("Create the file");

  // Tab A: the request appears without a reload, with session, risk and command, and counts in nav and title.
  const card = approvals.card(command);
  await expect(card).toBeVisible();
  await expect(card.getByTestId("approval-session")).toHaveText("Approvals e2e");
  await expect(card.getByTestId("risk-badge")).toBeVisible();
  await expect(approvals.navBadge()).toHaveText("1");
  await expect(tabA).toHaveTitle(/^\(1\) /);
  // Tab B shows it waiting too.
  await expect(tabB.getByTestId("tool-card").last()).toHaveAttribute("data-state", "waiting_approval");

  // A decision key does nothing while the keyboard is elsewhere on the page (WCAG 2.1.4)...
  await tabA.locator("body").click({ position: { x: 1, y: 1 } });
  await tabA.keyboard.press("a");
  await expect(tabB.getByTestId("tool-card").last()).toHaveAttribute("data-state", "waiting_approval");
  await expect(card).toBeVisible();
  // ...and approves once a request has focus (a click on the card gives it).
  await card.getByTestId("approval-description").click();
  await tabA.keyboard.press("a");
  await expect(approvals.cards()).toHaveCount(0);
  await expect(approvals.navBadge()).toHaveCount(0);

  // Tab B: the command ran and the model answered.
  await expect(tabB.getByTestId("tool-card").last()).toHaveAttribute("data-state", "completed");
  await expect(session.assistantMessages().last()).toContainText("Created the file after your approval.");

  // The history tab records who decided.
  await approvals.openTab("history");
  await expect(approvals.historyRows().first()).toHaveAttribute("data-status", "approved");
  await expect(approvals.historyRows().first()).toContainText("by web");
  await context.close();
});
