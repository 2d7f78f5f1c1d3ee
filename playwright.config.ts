import { defineConfig } from "@playwright/test";
import { CHROMIUM_ARGS } from "./server/preview/chromium-flags";

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
  retries: 0,
  reporter: [["list"]],
  globalSetup: "./tests/e2e/global-setup.ts",
  use: {
    browserName: "chromium",
    headless: true,
    trace: "off",
    launchOptions: {
      executablePath,
      // QUIC off: every page here is the local bridge over plain HTTP.
      args: [...CHROMIUM_ARGS, "--disable-quic"],
    },
  },
});
