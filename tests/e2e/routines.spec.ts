import { e2e, expect, freshWorkspace, login, scriptLlm, test } from "./fixtures";

// A routine made on the Routines page, fired as a webhook would (its own token, a JSON body), and
// its run seen in the routine's history and its session.
test("creates a routine on the page, fires it over HTTP with its token, and sees the run", async ({ page }) => {
  await login(page);
  await page.goto(`${e2e.baseUrl}/routines`);
  const workspace = await freshWorkspace("routine");
  const form = page.getByTestId("routine-form");
  await form.getByTestId("routine-name").fill("triage");
  await form.getByTestId("routine-workspace").fill(workspace);
  await form.getByTestId("routine-prompt").fill("Triage the new issue.");
  await form.getByTestId("routine-worktree").uncheck();
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
  await item.getByRole("link", { name: "open" }).first().click();
  await expect(page).toHaveURL(new RegExp(`/s/${session_id}`));
  await expect(page.getByText("Labelled it as a bug.")).toBeVisible();
});
