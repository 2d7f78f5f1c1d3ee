import os from "node:os";
import path from "node:path";
import type { Page } from "@playwright/test";
import { IdePage } from "./pages/ide-page";
import { SessionPage } from "./pages/session-page";
import { bridgeApi, e2e, expect, freshWorkspace, login, scriptLlm, test } from "./fixtures";

/** Screenshots go here (WL_SCREENS=/somewhere to keep them). */
const SHOTS = process.env.WL_SCREENS ?? os.tmpdir();

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `attention-${name}.png`) });
}

async function newSession(prefix: string, title?: string): Promise<string> {
  const workspace = await freshWorkspace(prefix);
  return (await bridgeApi<{ id: string }>("/api/v1/sessions", { workspace, ...(title ? { title } : {}) })).id;
}

async function scriptTitle(response: unknown): Promise<void> {
  const reply = await fetch(new URL("/__admin/title", e2e.fakeUrl), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(response),
  });
  if (!reply.ok) throw new Error(`scripting the title failed: ${reply.status}`);
}

async function setTheme(page: Page, theme: "dark" | "light"): Promise<void> {
  const toggle = page.getByTestId("toggle-theme");
  if ((await page.evaluate(() => document.documentElement.dataset.theme ?? "dark")) !== theme) await toggle.click();
  await expect(page.locator("html")).toHaveAttribute("data-theme", theme);
}

// A spec that failed midway may leave scripted replies behind; each test here starts clean.
test.beforeEach(async () => {
  const response = await fetch(new URL("/__admin/reset", e2e.fakeUrl), { method: "POST" });
  expect(response.ok).toBe(true);
});

test("a session is named after its first prompt by the model, live in every tab, and stays editable", async ({
  browser,
}) => {
  const context = await browser.newContext();
  const tabA = await context.newPage();
  const tabB = await context.newPage();
  await login(tabA);
  const sessionId = await newSession("titles");
  const a = new SessionPage(tabA);
  const b = new SessionPage(tabB);
  await a.goto(e2e.baseUrl, sessionId);
  await b.goto(e2e.baseUrl, sessionId);
  await expect(tabA.getByTestId("session-title")).toHaveText("New session");

  await scriptTitle({ text: "Slug helper for accented titles" });
  await scriptLlm({ text: "Sure." });
  await a.send("please make the slug helper keep accented letters as plain ones");
  await expect(tabA.getByTestId("session-title")).toHaveText("Slug helper for accented titles");
  await expect(tabB.getByTestId("session-title")).toHaveText("Slug helper for accented titles");
  await expect(tabB).toHaveTitle("Slug helper for accented titles · Worldline");
  // The title's call is not in the transcript.
  await expect(a.assistantMessages()).toHaveCount(1);

  // Renamed in place in tab B; tab A follows.
  await tabB.getByTestId("session-title").click();
  await tabB.getByTestId("session-title-input").fill("Accents in slugs");
  await tabB.getByTestId("session-title-input").press("Enter");
  await expect(tabA.getByTestId("session-title")).toHaveText("Accents in slugs");
  await expect(tabB.getByTestId("session-title")).toHaveText("Accents in slugs");
  await context.close();
});

test("opening the terminal panel on a session without terminals starts one", async ({ page }) => {
  await login(page);
  const sessionId = await newSession("attention-terminal", "Terminal panel");
  await page.goto(`${e2e.baseUrl}/s/${sessionId}`);
  await expect(page.getByTestId("connection-state")).toContainText("live");
  if ((await page.getByTestId("toggle-terminal").getAttribute("aria-pressed")) === "true")
    await page.getByTestId("toggle-terminal").click();
  await page.getByTestId("toggle-terminal").click();
  await expect(page.getByTestId("terminal-tab")).toHaveCount(1);
  await expect(page.getByTestId("terminal-view")).toHaveAttribute("data-status", "live");
  await expect(page.getByTestId("terminal-empty-new")).toHaveCount(0);
  // Closing and reopening the panel does not start another.
  await page.getByTestId("toggle-terminal").click();
  await page.getByTestId("toggle-terminal").click();
  await expect(page.getByTestId("terminal-view")).toHaveAttribute("data-status", "live");
  await expect(page.getByTestId("terminal-tab")).toHaveCount(1);
  // Leave the panel closed for the other specs (the layout is kept on the server).
  await page.getByTestId("toggle-terminal").click();
});

test("a write approval shows its diff once; on a 390 px phone approve and reject are full-width at the bottom", async ({
  browser,
}) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await login(page);
  const sessionId = await newSession("attention-diff", "Write approval");
  const ide = new IdePage(page);
  await ide.goto(e2e.baseUrl, sessionId);
  const body = Array.from({ length: 40 }, (_, i) => `line ${i + 1}: export const value${i} = ${i};`).join("\n");
  await scriptLlm(
    { toolCalls: [{ name: "write_file", arguments: { path: "src/values.ts", content: `${body}\n` } }] },
    { text: "Wrote src/values.ts." },
  );
  await ide.send("write the values module");
  const tool = ide.toolCards().last();
  await expect(tool).toHaveAttribute("data-state", "waiting_approval");
  await expect(tool.getByTestId("approval-card")).toBeVisible();
  await expect(tool.getByTestId("tool-diff")).toHaveCount(1);
  await expect(tool.getByTestId("approval-diff")).toHaveCount(0);
  // Nor again as the raw arguments inside the approval.
  await expect(tool.getByTestId("approval-card").getByText(/export const value0/)).toHaveCount(0);
  await expect(tool.getByText("+line 1: export const value0 = 0;")).toHaveCount(1);

  for (const theme of ["dark", "light"] as const) {
    await page.setViewportSize({ width: 1280, height: 800 });
    await setTheme(page, theme);
    await shot(page, `desktop-${theme}`);
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(page.getByTestId("pane-tabs")).toBeVisible();
    const actions = page.getByTestId("approval-actions");
    await actions.scrollIntoViewIfNeeded();
    // Sticky at the bottom while the card is in view: scroll the card's top into view and the buttons stay reachable.
    await page.getByTestId("approval-card").evaluate((el) => el.scrollIntoView({ block: "start" }));
    const allow = await page.getByTestId("approval-allow-once").boundingBox();
    const reject = await page.getByTestId("approval-reject").boundingBox();
    const transcript = await page.getByTestId("transcript").boundingBox();
    expect(allow && reject && transcript).toBeTruthy();
    // Two thumb-sized halves of one row…
    expect(allow!.width + reject!.width).toBeGreaterThan(300);
    expect(allow!.height).toBeGreaterThanOrEqual(40);
    expect(Math.abs(allow!.y - reject!.y)).toBeLessThan(2);
    // …at the bottom of the visible transcript, not below it.
    expect(allow!.y + allow!.height).toBeLessThanOrEqual(transcript!.y + transcript!.height + 1);
    expect(allow!.y).toBeGreaterThan(transcript!.y + transcript!.height / 2);
    await shot(page, `phone-${theme}`);
    await page
      .getByTestId("approval-card")
      .screenshot({ path: path.join(SHOTS, `attention-approval-390-${theme}.png`) });
  }
  await page.getByTestId("approval-allow-once").click();
  await expect(tool).toHaveAttribute("data-state", "completed");
  await setTheme(page, "dark");
  await context.close();
});

test("installable: a manifest with icons, and a service worker that caches the app shell and never API or socket.io", async ({
  page,
}) => {
  await login(page);
  const manifestHref = await page.locator('link[rel="manifest"]').getAttribute("href");
  expect(manifestHref).toBe("/manifest.webmanifest");
  const cdp = await page.context().newCDPSession(page);
  const { errors, data } = (await cdp.send("Page.getAppManifest")) as {
    errors: { message: string }[];
    data?: string;
  };
  expect(errors).toEqual([]);
  const manifest = JSON.parse(data!);
  expect(manifest.display).toBe("standalone");
  expect(manifest.icons.map((icon: { sizes: string }) => icon.sizes)).toEqual(
    expect.arrayContaining(["192x192", "512x512"]),
  );
  for (const icon of manifest.icons as { src: string }[]) {
    const response = await page.request.get(new URL(icon.src, e2e.baseUrl).toString());
    expect(response.headers()["content-type"]).toBe("image/png");
  }

  // The worker takes over; use the app (API calls, socket.io) and look into its cache.
  await expect.poll(() => page.evaluate(async () => Boolean(await navigator.serviceWorker.ready))).toBe(true);
  await page.reload();
  await expect.poll(() => page.evaluate(() => Boolean(navigator.serviceWorker.controller))).toBe(true);
  await page.getByTestId("nav-approvals").click();
  await expect(page.getByTestId("approvals-page")).toBeVisible();
  await page.getByTestId("nav-sessions").click();
  const cached = await page.evaluate(async () => {
    const urls: string[] = [];
    for (const name of await caches.keys()) {
      const cache = await caches.open(name);
      for (const request of await cache.keys()) urls.push(new URL(request.url).pathname);
    }
    return urls;
  });
  expect(cached).toEqual(expect.arrayContaining(["/offline.html", "/icons/icon-192.png"]));
  expect(cached.some((url) => url.startsWith("/_next/static/"))).toBe(true);
  expect(cached.filter((url) => url.startsWith("/api/") || url.startsWith("/socket.io"))).toEqual([]);
  // An API answer never comes from the worker.
  const api = await page.evaluate(async () => {
    const response = await fetch("/api/v1/sessions");
    return { ok: response.ok, type: response.type };
  });
  expect(api.ok).toBe(true);
  const [apiResponse] = await Promise.all([
    page.waitForResponse((response) => response.url().includes("/api/v1/sessions")),
    page.evaluate(() => fetch("/api/v1/sessions").then(() => undefined)),
  ]);
  expect(apiResponse.fromServiceWorker()).toBe(false);
  const installability = (await cdp.send("Page.getInstallabilityErrors")) as {
    installabilityErrors: { errorId: string }[];
  };
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "home-390");
  // Playwright's contexts are incognito, where Chromium never installs; nothing else may be missing.
  expect(
    installability.installabilityErrors.map((error) => error.errorId).filter((id) => id !== "in-incognito"),
  ).toEqual([]);
});
