import { HomePage } from "./pages/home-page";
import { SessionPage } from "./pages/session-page";
import { e2e, expect, freshWorkspace, login, scriptLlm, test } from "./fixtures";

test("opens the printed URL, creates a session and streams the model's reply", async ({ page }) => {
  await login(page);
  expect(page.url()).not.toContain("token=");
  const workspace = await freshWorkspace("foundation");
  const sessionId = await new HomePage(page).createSession(workspace);
  const session = new SessionPage(page);
  await session.waitLive();

  await scriptLlm({
    reasoning: "The user greets me.",
    text: "Hello! I am the **fake** model, streaming.",
    chunkSize: 3,
    delayMs: 10,
  });
  await session.send("Hello there");
  await expect(session.userMessages().last()).toHaveText("Hello there");
  await expect(session.assistantMessages().last()).toContainText("I am the");
  await expect(session.assistantMessages().last()).toContainText("fake");
  await expect(session.assistantMessages().last()).toContainText("model, streaming.");
  await expect(page.getByTestId("send-button")).toBeVisible();

  // A reload shows the same transcript from the event log.
  await page.reload();
  await session.waitLive();
  await expect(session.assistantMessages().last()).toContainText("model, streaming.");
  expect(sessionId).toBeTruthy();
});

test("refuses the page without the token", async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const response = await page.goto(e2e.baseUrl);
  expect(response?.status()).toBe(401);
  await expect(page.locator("body")).toContainText("needs its token");
  await context.close();
});
