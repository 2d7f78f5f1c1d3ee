import { defineConfig } from "@playwright/test";

/** Debian's Chromium by default (the test tool's own browser download is not possible here). */
const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export default defineConfig({
  testDir: "tests/e2e",
  testMatch: "**/*.spec.ts",
  // One bridge is shared by the specs and the machine has two cores.
  workers: 1,
  fullyParallel: false,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  // One retry, reported as "flaky" in the summary: twice in about ten full CI runs a prompt sent right after a new
  // session's page went live never reached the model (the fake model saw no request), and the cause is not found yet;
  // a failed attempt prints what its pages and the session's log showed (fixtures.ts). A test failing twice fails.
  retries: 1,
  reporter: [["list"]],
  globalSetup: "./tests/e2e/global-setup.ts",
  use: {
    browserName: "chromium",
    headless: true,
    trace: "off",
    launchOptions: {
      executablePath,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    },
  },
});
