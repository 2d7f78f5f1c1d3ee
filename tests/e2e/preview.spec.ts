import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { e2e, expect, login, newSession, scriptLlm, test } from "./fixtures";
import { freePort } from "../support/ports";

const DEV_SERVER = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "fixtures",
  "preview",
  "dev-server.mjs",
);

test("the agent's dev server shows in the Preview panel, reloads over WebSocket, picks an element and is screenshotted by the agent", async ({
  page,
}) => {
  test.setTimeout(180_000);
  const { id, workspace } = await newSession("preview");
  const port = await freePort();
  await login(page);
  await page.goto(`${e2e.baseUrl}/s/${id}`);
  const prompt = page.getByTestId("prompt-input");

  // 1. The agent starts a dev server (a background shell task of the session).
  await scriptLlm(
    { toolCalls: [{ name: "shell", arguments: { command: `node ${DEV_SERVER} ${port}`, background: true } }] },
    { text: "The dev server runs." },
  );
  await prompt.fill("start the dev server");
  await prompt.press("Enter");
  // `node <a script outside the workspace>` asks even in yolo: a person allows it.
  await page.getByRole("button", { name: /Allow once/ }).click({ timeout: 30_000 });
  await expect(page.getByTestId("markdown").getByText("The dev server runs.")).toBeVisible({ timeout: 30_000 });

  // 2. Its port appears in the Preview panel.
  await page.getByTestId("centre-tab-preview").click();
  const open = page.getByTestId(`preview-open-${port}`);
  await expect(open).toBeVisible({ timeout: 15_000 });
  await open.click();

  // 3. The page, on its own origin, through the IDE's sign-in hop; hot reload over the proxied WebSocket.
  const app = page.frameLocator('[data-testid="preview-frame"]').frameLocator("#wl-app");
  await expect(app.locator("#title")).toHaveText("Hello from dev", { timeout: 30_000 });
  await expect(app.locator("body")).toHaveAttribute("data-hmr", "connected");
  await fs.writeFile(path.join(workspace, "content.txt"), "Reloaded over the proxy\n");
  await expect(app.locator("#title")).toHaveText("Reloaded over the proxy", { timeout: 15_000 });

  // The previewed page reads no cookie (the preview cookie is HttpOnly, the IDE's is another host's)
  // and cannot read the IDE's API.
  const inner = page.frame({ url: (url) => url.pathname === "/" && url.hostname.startsWith(`p${port}-`) })!;
  expect(new URL(inner.url()).hostname).toBe(`p${port}-${id}.localhost`);
  expect(await inner.evaluate(() => document.cookie)).toBe("");
  const apiRead = await inner.evaluate(async (base) => {
    try {
      const response = await fetch(`${base}/api/v1/sessions`, { credentials: "include" });
      return `read ${response.status}`;
    } catch {
      return "blocked";
    }
  }, e2e.baseUrl);
  expect(apiRead).toBe("blocked");

  // 4. Pick element: its selector and text go into the prompt, its screenshot as an attachment.
  await page.getByTestId("preview-pick").click();
  await app.locator("p.note").click();
  await expect(prompt).toHaveValue(/Element `body > p` on \/:/, { timeout: 15_000 });
  await expect(prompt).toHaveValue(/A paragraph to pick\./);
  await expect(page.getByTestId("prompt").locator("img")).toHaveCount(1, { timeout: 30_000 });
  await prompt.fill("");

  // 5. The agent's browser screenshot shows in the transcript.
  await scriptLlm(
    { toolCalls: [{ name: "browser", arguments: { action: "screenshot", url: `http://127.0.0.1:${port}/` } }] },
    { text: "It looks right." },
  );
  await prompt.fill("check how it looks");
  await prompt.press("Enter");
  await expect(page.getByTestId("markdown").getByText("It looks right.")).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId("tool-screenshot")).toBeVisible();
});
