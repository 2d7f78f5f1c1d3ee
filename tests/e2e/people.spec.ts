import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "@playwright/test";
import { startOidcProvider, type TestOidcProvider } from "../support/oidc-provider";
import { test } from "./fixtures";

/**
 * A hub with named people, in a real Chromium: its own `worldline serve` (single-token mode is the
 * shared bridge of the other specs) with a real OpenID Connect provider, and a first admin made
 * with `worldline users add` as the README says.
 */
const root = path.resolve(import.meta.dirname, "../..");
let provider: TestOidcProvider;
let hub: ChildProcess;
let hubUrl: string;
let hubEnv: NodeJS.ProcessEnv;

test.beforeAll(async () => {
  provider = await startOidcProvider();
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-e2e-hub-"));
  hubEnv = {
    ...process.env,
    PORT: "0",
    WORLDLINE_HOME: home,
    WORLDLINE_TOKEN: "e2e-hub-token-0123456789",
    WORLDLINE_OIDC_ISSUER: provider.issuer,
    WORLDLINE_OIDC_CLIENT_ID: provider.clientId,
    WORLDLINE_OIDC_CLIENT_SECRET: provider.clientSecret,
  };
  const added = spawnSync(
    process.execPath,
    [path.join(root, "bin/worldline.mjs"), "users", "add", "root", "--role", "admin", "--password-stdin"],
    {
      cwd: root,
      env: hubEnv,
      input: "root-password-123\n",
      encoding: "utf8",
    },
  );
  expect(added.status, added.stderr).toBe(0);
  expect(added.stdout).toContain("Added root (admin).");
  hub = spawn(process.execPath, [path.join(root, "bin/worldline.mjs"), "serve"], {
    cwd: root,
    env: hubEnv,
    stdio: ["ignore", "pipe", "inherit"],
  });
  hubUrl = new URL(await readyUrl(hub)).origin;
  provider.allowRedirect(`${hubUrl}/auth/oidc/callback`);
});

test.afterAll(async () => {
  if (hub && hub.exitCode === null) {
    const exited = new Promise((resolve) => hub.once("exit", resolve));
    hub.kill("SIGTERM");
    await exited;
  }
  await provider?.close();
});

test("signs in through the OpenID Connect provider in Chromium, and signs out", async ({ page }) => {
  await page.goto(`${hubUrl}/`);
  await expect(page).toHaveURL(`${hubUrl}/signin`);
  await expect(page.getByRole("heading", { name: "Sign in to Worldline" })).toBeVisible();
  await page.getByTestId("signin-oidc").click();
  // The provider's own login form (oidc-provider's development interaction).
  await expect(page).toHaveURL(new RegExp(`^${provider.issuer}/interaction/`));
  await page.locator('input[name="login"]').fill("grace");
  await page.locator('input[name="password"]').fill("anything");
  await page.locator('button[type="submit"]').click();
  await expect(page).toHaveURL(`${hubUrl}/`);
  await expect(page.getByTestId("person-name")).toHaveText("Test grace");
  await expect(page.getByTestId("person-menu")).toContainText("(viewer)");
  const cookie = (await page.context().cookies(hubUrl)).find((c) => c.name.startsWith("worldline_person_"));
  expect(cookie?.httpOnly).toBe(true);
  expect(cookie?.sameSite).toBe("Lax");

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(`${hubUrl}/signin`);
  await page.goto(`${hubUrl}/settings`);
  await expect(page).toHaveURL(`${hubUrl}/signin?next=%2Fsettings`);
});

test("signs in with a password made by `worldline users add` (a wrong one says so), and sets daily budgets in Settings", async ({
  page,
}) => {
  await page.goto(`${hubUrl}/signin?next=%2Fsettings`);
  await page.getByLabel("Name").fill("root");
  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.locator("#signin-error")).toContainText("Wrong name or password");
  await page.getByLabel("Password").fill("root-password-123");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(`${hubUrl}/settings`);
  await expect(page.getByTestId("person-menu")).toContainText("root (admin)");
  // An admin's Settings: the people (grace came through the provider in the test before) and tokens.
  await expect(page.getByTestId("people-settings")).toContainText("grace");
  await page.getByLabel("Token name").fill("laptop script");
  await page.getByRole("button", { name: "Create token" }).click();
  const token = (await page.getByTestId("token-created").locator("code").textContent()) ?? "";
  expect(token).toMatch(/^wlp_/);
  const me = await fetch(`${hubUrl}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
  expect(((await me.json()) as { person: { name: string } }).person.name).toBe("root");

  // Daily budgets: an admin sets a person's in the people list (a bad value is refused on the spot),
  // and each person reads their own with today's spend.
  await expect(page.getByTestId("my-budget")).toContainText("No daily budget");
  const graceBudget = page.getByTestId("person-budget-grace");
  await graceBudget.fill("-3");
  await graceBudget.press("Enter");
  await expect(graceBudget).toHaveAttribute("aria-invalid", "true");
  await graceBudget.fill("1.5");
  await graceBudget.press("Enter");
  await expect(graceBudget).toHaveAttribute("aria-invalid", "false");
  await page.getByLabel("Daily budget of root in USD (empty for none)").fill("2");
  await page.getByLabel("Daily budget of root in USD (empty for none)").press("Enter");
  await expect
    .poll(async () => {
      const users = await fetch(`${hubUrl}/api/v1/users`, { headers: { authorization: `Bearer ${token}` } });
      return ((await users.json()) as { name: string; budget_usd: number | null }[]).map((u) => [u.name, u.budget_usd]);
    })
    .toEqual(
      expect.arrayContaining([
        ["grace", 1.5],
        ["root", 2],
      ]),
    );
  await page.reload();
  await expect(page.getByTestId("person-budget-grace")).toHaveValue("1.5");
  await expect(page.getByTestId("my-budget")).toContainText("$0 spent of $2.00 today.");
});

function readyUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const match = /Worldline ready: (\S+)/.exec(buffer);
      if (match) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`the hub exited with ${code} before its ready line`)));
  });
}
