import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Page } from "@playwright/test";
import { ApprovalsPage } from "./pages/approvals-page";
import { SessionPage } from "./pages/session-page";
import { clickNotification, counters, installAttentionStubs, notifications, setAway } from "./pages/attention-stubs";
import { bridgeApi, e2e, expect, freshWorkspace, login, scriptLlm, test } from "./fixtures";

/** Screenshots and the notifications' text go here (WL_SCREENS=/somewhere to keep them). */
const SHOTS = process.env.WL_SCREENS ?? os.tmpdir();

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `attention-${name}.png`) });
}

/** Requests waiting anywhere: the tab's count includes every session's. */
async function pendingCount(): Promise<number> {
  return (await bridgeApi<unknown[]>("/api/v1/approvals?status=pending")).length;
}

async function completedTurns(sessionId: string): Promise<number> {
  const events = await bridgeApi<{ type: string }[]>(`/api/v1/sessions/${sessionId}/events`);
  return events.filter((event) => event.type === "turn.completed").length;
}

async function newSession(prefix: string, title?: string): Promise<string> {
  const workspace = await freshWorkspace(prefix);
  return (await bridgeApi<{ id: string }>("/api/v1/sessions", { workspace, ...(title ? { title } : {}) })).id;
}

// A spec that failed midway may leave scripted replies behind; each test here starts clean.
test.beforeEach(async () => {
  const response = await fetch(new URL("/__admin/reset", e2e.fakeUrl), { method: "POST" });
  expect(response.ok).toBe(true);
});

test("a hidden tab is told about a waiting approval, a finished turn and a failed one: notification, sound, count in title and favicon", async ({
  browser,
}) => {
  const context = await browser.newContext();
  await installAttentionStubs(context);
  const page = await context.newPage();
  await login(page);
  const sessionId = await newSession("attention", "Attention e2e");
  const session = new SessionPage(page);
  await session.goto(e2e.baseUrl, sessionId);
  const base = await pendingCount();

  // Never asked on page load; asked once, from the bell's visible control.
  expect((await counters(page)).asks).toBe(0);
  await page.getByTestId("attention-menu").click();
  await page.getByTestId("attention-allow").click();
  expect((await counters(page)).asks).toBe(1);
  await expect(page.getByTestId("attention-allow")).toHaveCount(0);
  // Sound on for this session only (the global default is off).
  await page.getByTestId("attention-sound-on").click();
  await expect(page.getByTestId("attention-sound-on")).toHaveAttribute("aria-pressed", "true");
  await page.getByTestId("attention-menu").click();

  const command = `touch attention-${Date.now()}.txt`;
  await scriptLlm(
    { toolCalls: [{ name: "shell", arguments: { command } }] },
    { text: "Created the file you asked for." },
    { status: 401, body: { error: { message: "The API key was revoked." } } },
  );
  await session.send("Create the file");
  await setAway(page, true);

  // The approval: one notification naming the session and the command, a chime, "(1)" and a badge.
  await expect.poll(() => notifications(page)).toHaveLength(1);
  const [approval] = await notifications(page);
  expect(approval.title).toBe("Approval needed · Attention e2e");
  expect(approval.body).toBe(`shell: ${command}`);
  expect(approval.tag).toMatch(/^approval:/);
  expect((await counters(page)).tones).toBeGreaterThan(0);
  await expect(page).toHaveTitle(`(${base + 1}) Attention e2e · Worldline`);
  await expect(page.locator('link[rel="icon"][data-attention]')).toHaveAttribute("data-count", String(base + 1));
  await expect(page.locator('link[rel="icon"][data-attention]')).toHaveAttribute("href", /^data:image\/png;base64,/);

  const favicon = await page.locator('link[rel="icon"][data-attention]').getAttribute("href");
  const iconPage = await context.newPage();
  await iconPage.setViewportSize({ width: 160, height: 160 });
  await iconPage.setContent(
    `<body style="margin:0;background:#777"><img src="${favicon}" width="128" height="128" style="margin:16px">`,
  );
  await shot(iconPage, "favicon");
  await iconPage.close();

  // Clicking it brings the keyboard to that approval's "Allow once".
  await page.getByTestId("transcript").evaluate((el) => (el.scrollTop = 0));
  await clickNotification(page, 0);
  const card = page.locator(`[data-approval-id="${approval.tag.slice("approval:".length)}"]`);
  await expect(card.getByTestId("approval-allow-once")).toBeFocused();
  await expect(card).toHaveAttribute("data-revealed", "true");
  await card.getByTestId("approval-allow-once").click();

  // Still away: the turn's end is news too, and counts until the tab is looked at.
  await expect.poll(() => notifications(page)).toHaveLength(2);
  const finished = (await notifications(page))[1];
  expect(finished.title).toBe("Turn finished · Attention e2e");
  expect(finished.body).toBe("Created the file you asked for.");
  await expect(page).toHaveTitle(`(${base + 1}) Attention e2e · Worldline`);

  await setAway(page, false);
  await expect(page).toHaveTitle(base ? `(${base}) Attention e2e · Worldline` : "Attention e2e · Worldline");
  await expect(page.locator('link[rel="icon"][data-attention]')).toHaveAttribute("data-count", String(base));

  // A failed turn while away.
  await session.send("Try again");
  await setAway(page, true);
  await expect.poll(() => notifications(page)).toHaveLength(3);
  const failed = (await notifications(page))[2];
  expect(failed.title).toBe("Turn failed · Attention e2e");
  expect(failed.body).toContain("The API key was revoked.");

  const all = await notifications(page);
  await fs.writeFile(
    path.join(SHOTS, "attention-notifications.txt"),
    all.map((n) => `${n.title}\n  ${n.body}\n  (tag ${n.tag})`).join("\n") + "\n",
  );
  await context.close();
});

test("two tabs of one session notify once; a session muted in its bell beats the global setting, which lives in Settings", async ({
  browser,
}) => {
  const context = await browser.newContext();
  await installAttentionStubs(context, "granted");
  const tabA = await context.newPage();
  const tabB = await context.newPage();
  await login(tabA);
  const sessionId = await newSession("attention-tabs", "Two tabs");
  await new SessionPage(tabA).goto(e2e.baseUrl, sessionId);
  await new SessionPage(tabB).goto(e2e.baseUrl, sessionId);

  await scriptLlm({ text: "First answer." }, { text: "Second answer." }, { text: "Third answer." });
  await new SessionPage(tabA).send("one");
  await expect(new SessionPage(tabA).assistantMessages().last()).toContainText("First answer.");
  // The answer shows before the turn's end is logged; wait for that, or it would be news to the hidden tabs.
  await expect.poll(() => completedTurns(sessionId)).toBe(1);
  await setAway(tabA, true);
  await setAway(tabB, true);
  await new SessionPage(tabA).send("two");
  await expect.poll(async () => (await notifications(tabA)).length + (await notifications(tabB)).length).toBe(1);
  // A quiet window: a second tab's duplicate would have come by now.
  await tabA.waitForTimeout(500);
  expect((await notifications(tabA)).length + (await notifications(tabB)).length).toBe(1);

  // Mute the session in tab B: both tabs follow, and the next turn is silent although the global choice is on.
  await setAway(tabB, false);
  await tabB.getByTestId("attention-menu").click();
  await expect(tabB.getByTestId("attention-notify-default")).toHaveText("Default (on)");
  await tabB.getByTestId("attention-notify-off").click();
  await setAway(tabB, true);
  await new SessionPage(tabA).send("three");
  await expect(new SessionPage(tabA).assistantMessages().last()).toContainText("Third answer.");
  // A quiet window: a notification the mute failed to stop would have come by now.
  await tabA.waitForTimeout(500);
  expect((await notifications(tabA)).length + (await notifications(tabB)).length).toBe(1);

  // The global toggles are in Settings (and "default" in a session follows them).
  await setAway(tabA, false);
  await tabA.goto(`${e2e.baseUrl}/settings`);
  await expect(tabA.getByTestId("attention-notify")).toBeChecked();
  await tabA.getByTestId("attention-notify").uncheck();
  await tabA.getByTestId("attention-sound").check();
  await tabA.goto(`${e2e.baseUrl}/s/${sessionId}`);
  await tabA.getByTestId("attention-menu").click();
  await expect(tabA.getByTestId("attention-notify-off")).toHaveAttribute("aria-pressed", "true");
  await expect(tabA.getByTestId("attention-sound-default")).toHaveText("Default (on)");
  await context.close();
});

test("/approvals notifies for every session, and clicking the notification focuses that request", async ({
  browser,
}) => {
  const context = await browser.newContext();
  await installAttentionStubs(context, "granted");
  const page = await context.newPage();
  await login(page);
  const approvals = new ApprovalsPage(page);
  await approvals.goto(e2e.baseUrl);
  const base = await pendingCount();
  await setAway(page, true);
  const sessionId = await newSession("attention-queue", "Queue e2e");
  const file = `queued-${Date.now()}.txt`;
  await scriptLlm({ toolCalls: [{ name: "write_file", arguments: { path: file, content: "hello\n" } }] });
  // A script starts the turn (chat/stream answers up to the approval request).
  void bridgeApi("/api/v1/chat/stream", { message: "write it", session_id: sessionId }).catch(() => undefined);
  await expect.poll(() => notifications(page)).toHaveLength(1);
  const [note] = await notifications(page);
  expect(note.title).toBe("Approval needed · Queue e2e");
  expect(note.body).toBe(`write_file: ${file}`);
  await expect(page).toHaveTitle(new RegExp(`^\\(${base + 1}\\) `));
  await clickNotification(page, 0);
  const card = page.locator(`[data-approval-id="${note.tag.slice("approval:".length)}"]`);
  await expect(card.getByTestId("approval-allow-once")).toBeFocused();
  await expect(card).toHaveAttribute("data-active", "true");
  // The queue's card shows the write's diff, once.
  await expect(card.getByTestId("approval-diff")).toHaveCount(1);
  await card.getByTestId("approval-reject").click();
  await expect(approvals.cards()).toHaveCount(0);
  await context.close();
});
