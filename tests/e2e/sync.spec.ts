import { SessionPage } from "./pages/session-page";
import { bridgeApi, e2e, expect, freshWorkspace, login, scriptLlm, test } from "./fixtures";

/** What a tab shows of the transcript, to compare tabs with each other. */
async function transcriptOf(page: import("@playwright/test").Page): Promise<string[]> {
  const users = await page.getByTestId("message-user").allInnerTexts();
  const answers = await page.getByTestId("message-text").allInnerTexts();
  const tools = await page
    .getByTestId("tool-card")
    .evaluateAll((cards) => cards.map((card) => card.getAttribute("data-state") ?? ""));
  return [
    ...users.map((t) => `user:${t.trim()}`),
    ...answers.map((t) => `answer:${t.trim()}`),
    ...tools.map((t) => `tool:${t}`),
  ];
}

test("two tabs and a late phone-sized third stay identical through a streamed multi-tool turn and a reload", async ({
  browser,
}) => {
  const context = await browser.newContext();
  const tabA = await context.newPage();
  const tabB = await context.newPage();
  await login(tabA);
  const workspace = await freshWorkspace("sync");
  const { id: sessionId } = await bridgeApi<{ id: string }>("/api/v1/sessions", {
    workspace,
    yolo: true,
    title: "Sync e2e",
  });
  const [a, b] = [new SessionPage(tabA), new SessionPage(tabB)];
  await a.goto(e2e.baseUrl, sessionId);
  await b.goto(e2e.baseUrl, sessionId);
  await expect(tabA.getByTestId("presence-viewers")).toHaveAttribute("data-count", "2");

  const answer = Array.from({ length: 120 }, (_, i) => `w${i}`).join(" ");
  await scriptLlm(
    {
      toolCalls: [
        { name: "write_file", arguments: { path: "notes.md", content: "one\ntwo\n" } },
        { name: "list_dir", arguments: { path: "." } },
      ],
      delayMs: 5,
    },
    { toolCalls: [{ name: "read_file", arguments: { path: "notes.md" } }], delayMs: 5 },
    { text: answer, chunkSize: 3, delayMs: 5 },
  );
  await a.send("Write notes, list and read them");
  // Tab B sees the turn that tab A started as running elsewhere, while it streams.
  await expect(tabB.getByTestId("presence-running-elsewhere")).toBeVisible();
  await expect(a.assistantMessages().last()).toContainText("w119");
  await expect(b.assistantMessages().last()).toContainText("w119");
  await expect(tabB.getByTestId("presence-running-elsewhere")).toHaveCount(0);

  // A late third tab on a phone-sized screen.
  const phoneContext = await browser.newContext({
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
  });
  const tabC = await phoneContext.newPage();
  await login(tabC);
  const c = new SessionPage(tabC);
  await c.goto(e2e.baseUrl, sessionId);
  await expect(tabA.getByTestId("presence-viewers")).toHaveAttribute("data-count", "3");

  const expected = await transcriptOf(tabA);
  expect(expected.filter((line) => line.startsWith("tool:"))).toEqual([
    "tool:completed",
    "tool:completed",
    "tool:completed",
  ]);
  expect(await transcriptOf(tabB)).toEqual(expected);
  // The phone shows the agent pane; its transcript matches too.
  await expect.poll(() => transcriptOf(tabC)).toEqual(expected);

  // A reload of tab B comes back to the same transcript.
  await tabB.reload();
  await b.waitLive();
  await expect.poll(() => transcriptOf(tabB)).toEqual(expected);
  await phoneContext.close();
  await context.close();
});

test("a view-only share link shows the session live and cannot act", async ({ browser }) => {
  const workspace = await freshWorkspace("share");
  const { id: sessionId } = await bridgeApi<{ id: string }>("/api/v1/sessions", {
    workspace,
    yolo: true,
    title: "Shared e2e",
  });
  const link = await bridgeApi<{ path: string }>(`/api/v1/sessions/${sessionId}/share-links`, {
    scope: "view",
    expires_in: 3600,
  });
  const guest = await (await browser.newContext()).newPage();
  await guest.goto(`${e2e.baseUrl}${link.path}`);
  await expect(guest).toHaveURL(new RegExp(`/s/${sessionId}$`));
  await new SessionPage(guest).waitLive();
  await expect(guest.getByTestId("shared-access")).toContainText("view only");

  const ownerContext = await browser.newContext();
  const owner = await ownerContext.newPage();
  await login(owner);
  const session = new SessionPage(owner);
  await session.goto(e2e.baseUrl, sessionId);
  await scriptLlm({ text: "Hello from the shared session." });
  await session.send("hi");
  await expect(guest.getByTestId("message-text").last()).toContainText("Hello from the shared session.");

  // The guest gets no input, and the bridge refuses its actions even when scripted by hand.
  await expect(guest.getByTestId("view-only-notice")).toBeVisible();
  await expect(guest.getByTestId("prompt-input")).toHaveCount(0);
  const status = await guest.evaluate(async (id) => {
    const { csrf } = await (await fetch("/api/v1/csrf")).json();
    const response = await fetch(`/api/v1/sessions/${id}/cancel`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-worldline-csrf": csrf },
      body: "{}",
    });
    return response.status;
  }, sessionId);
  expect(status).toBe(403);
  await expect(owner.getByTestId("message-user")).toHaveCount(1);
  await ownerContext.close();
});
