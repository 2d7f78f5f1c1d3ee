import { HomePage } from "./pages/home-page";
import { SessionPage } from "./pages/session-page";
import { bridgeApi, e2e, expect, freshWorkspace, login, scriptLlm, test } from "./fixtures";

// After two turns a session shows how much of its prompt came from the provider's cache and
// what it cost, at a price set on the Settings page.
test("shows cache hit % and cost after two turns, at a price set in Settings", async ({ page }) => {
  await login(page);
  await page.goto(`${e2e.baseUrl}/settings`);
  const prices = page.getByTestId("prices-form");
  await prices.getByTestId("price-add").click();
  const row = prices.getByTestId("price-row").last();
  await row.getByTestId("price-model").fill("fake-model");
  await row.getByTestId("price-input").fill("3");
  await row.getByTestId("price-cached_input").fill("0.3");
  await row.getByTestId("price-output").fill("15");
  await prices.getByTestId("prices-save").click();
  await expect(prices.getByTestId("prices-status")).toHaveText("Saved.");

  try {
    await page.goto(`${e2e.baseUrl}/`);
    const workspace = await freshWorkspace("cost");
    await new HomePage(page).createSession(workspace);
    const session = new SessionPage(page);
    await session.waitLive();

    await scriptLlm({ text: "First answer, from scratch." });
    await session.send("Hello");
    await expect(session.assistantMessages().last()).toContainText("from scratch");
    await scriptLlm({ text: "Second answer, mostly from the cache." });
    await session.send("And again");
    await expect(session.assistantMessages().last()).toContainText("from the cache");

    const footers = page.getByTestId("turn-footer");
    await expect(footers).toHaveCount(2);
    // The second turn's request starts with the whole first one: the fake's prefix cache serves most of it.
    await expect(footers.last()).toContainText(/\(\d{2,3}% cached\)/);
    await expect(footers.last()).toContainText("$");
    await expect(page.getByTestId("status-cache")).toContainText(/cache \d+%/);
    await expect(page.getByTestId("status-cost")).toContainText(/^\$\d/);
    await page.screenshot({ path: "/work/screens/models-cost.png" });

    // The sessions list shows what the session cost.
    await page.goto(`${e2e.baseUrl}/`);
    await expect(page.getByTestId("session-cost").filter({ hasText: "$" }).first()).toBeVisible();
  } finally {
    await bridgeApi("/api/v1/settings/prices", { prices: {} }, "PUT");
  }
});
