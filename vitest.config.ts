import { defineConfig } from "vitest/config";
import { useHermeticHome } from "./tests/support/hermetic-home.mjs";

// Workers inherit it: every shell a test opens starts from an empty HOME.
useHermeticHome();

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["tests/unit/**/*.test.ts"],
          environment: "node",
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["tests/integration/**/*.test.ts"],
          environment: "node",
          // On PostgreSQL (WORLDLINE_TEST_POSTGRES), drops the databases each file used.
          setupFiles: ["tests/integration/setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Integration tests start real bridges, PTYs and child processes; two cores are shared.
          fileParallelism: false,
        },
      },
      {
        test: {
          // `npm run test:faults`: private PostgreSQL/Redis clusters, stopped and started on purpose (issue 29).
          name: "faults",
          include: ["tests/faults/**/*.test.ts"],
          environment: "node",
          testTimeout: 180_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
