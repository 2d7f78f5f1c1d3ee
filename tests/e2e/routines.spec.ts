import type { Page } from "@playwright/test";
import { BoardPage } from "./pages/board-page";
import { bridgeApi, e2e, expect, freshWorkspace, login, scriptLlm, test } from "./fixtures";

/** "$0.0012 / $2.00": the session's spend against its budget (the header says "Budget:" to a screen reader). */
const spendOf = (budget: string, lead = "") => new RegExp(`^${lead}\\$[\\d.]+ / \\$${budget.replace(".", "\\.")}$`);

// A routine made on the Routines page, fired as a webhook would (its own token, a JSON body), and
// its run seen in the routine's history, on the board and in its session, with its spend against
// the routine's budget on the card and in the session's header.
test("creates a routine on the page, fires it over HTTP with its token, and sees the run", async ({ page }) => {
  await bridgeApi(
    "/api/v1/settings/prices",
    { prices: { "fake-model": { input: 1, cached_input: 0.1, output: 2 } } },
    "PUT",
  );
  try {
    await createFireAndFollow(page);
  } finally {
    await bridgeApi("/api/v1/settings/prices", { prices: {} }, "PUT");
  }
});

async function createFireAndFollow(page: Page): Promise<void> {
  await login(page);
  await page.goto(`${e2e.baseUrl}/routines`);
  const workspace = await freshWorkspace("routine");
  const form = page.getByTestId("routine-form");
  await form.getByTestId("routine-name").fill("triage");
  await form.getByTestId("routine-workspace").fill(workspace);
  await form.getByTestId("routine-prompt").fill("Triage the new issue.");
  await form.getByTestId("routine-worktree").uncheck();
  await form.getByTestId("routine-budget").fill("2");
  await form.getByTestId("routine-create").click();

  const hint = page.getByTestId("routine-token");
  await expect(hint).toContainText("Bearer wlr_");
  const curl = (await hint.locator("pre").textContent()) ?? "";
  const url = /curl -X POST (\S+)/.exec(curl)?.[1];
  const token = /Bearer (wlr_[\w-]+)/.exec(curl)?.[1];
  expect(url && token).toBeTruthy();

  await scriptLlm({ text: "Labelled it as a bug." });
  const fired = await fetch(url as string, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ issue: 42, title: "Crash on start" }),
  });
  expect(fired.status).toBe(202);
  const { session_id } = (await fired.json()) as { session_id: string };

  const item = page.getByTestId("routine-item").filter({ hasText: "triage" });
  await expect(item.getByTestId("routine-run").first()).toContainText("completed", { timeout: 20_000 });
  await expect(item.getByTestId("routine-run").first()).toContainText("fire");

  // The run's session on the board, with what it spent of the routine's budget.
  const board = new BoardPage(page);
  await board.goto(e2e.baseUrl);
  const card = board.card(session_id);
  await expect(card).toBeVisible();
  await expect(card.getByTestId("card-cost")).toHaveText(spendOf("2.00"));
  await card.getByTestId("card-link").click();
  await expect(page).toHaveURL(new RegExp(`/s/${session_id}`));
  await expect(page.getByText("Labelled it as a bug.")).toBeVisible();

  // The header shows it too, and follows a new budget without a reload.
  const header = page.getByTestId("session-budget");
  await expect(header).toHaveText(spendOf("2.00", "Budget: "));
  await bridgeApi(`/api/v1/sessions/${session_id}`, { budget_usd: 3.5 }, "PATCH");
  await expect(header).toHaveText(spendOf("3.50", "Budget: "));
  await page.goto(`${e2e.baseUrl}/routines`);
  await page
    .getByTestId("routine-item")
    .filter({ hasText: "triage" })
    .getByRole("link", { name: "open" })
    .first()
    .click();
  await expect(page).toHaveURL(new RegExp(`/s/${session_id}`));
}
