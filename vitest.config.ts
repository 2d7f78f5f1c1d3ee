import { readdirSync, readFileSync } from "node:fs";
import { defineConfig } from "vitest/config";
import { useHermeticHome } from "./tests/support/hermetic-home.mjs";

// Workers inherit it: every shell a test opens starts from an empty HOME.
useHermeticHome();

/**
 * Integration files that run one at a time, in their own step (tests/run.mjs): they kill bridges
 * with SIGKILL, bound a process's heap or child processes over hundreds of sessions, push a terminal
 * or a fuzzer as hard as it goes, or time a process group's end. Every other integration file shares nothing
 * (its own temp dirs, data dir, database, Redis key prefix, free ports).
 */
const SERIAL_INTEGRATION = [
  "tests/integration/reliability/**/*.test.ts",
  "tests/integration/pty/**/*.test.ts",
  "tests/integration/security/fuzz.test.ts",
  "tests/integration/security/headers-fuzz.test.ts",
  "tests/integration/tools/shell.test.ts",
];
/** Two files at once on the two cores CI has (vitest's default is one fewer than the cores). */
const WORKERS = 2;
/**
 * Test files share their worker's loaded modules instead of importing the server afresh per file:
 * each keeps to its own temp dirs, database and ports, and importing was over a third of their time
 * (integration: 403 s -> 250 s on two cores). A file that replaces a module (`vi.mock`) needs a fresh
 * module graph: such unit files run in their own project (`unit-mocking`), and integration files may
 * not mock at all (checked below). The serial files keep a fresh graph each too: they measure heaps
 * and kill processes.
 */
const SHARED_MODULES = { isolate: false };

/** The test files under `folder` (relative to it) that replace a module. */
function mockingFiles(folder: string): string[] {
  const base = new URL(folder, import.meta.url);
  return readdirSync(base, { recursive: true, encoding: "utf8" }).filter(
    (file) => file.endsWith(".test.ts") && /\bvi\.(mock|doMock)\(/.test(readFileSync(new URL(file, base), "utf8")),
  );
}

const UNIT_MOCKING = mockingFiles("tests/unit/").map((file) => `tests/unit/${file}`);
const integrationMocking = mockingFiles("tests/integration/");
if (integrationMocking.length > 0)
  throw new Error(
    `Integration files share their modules and cannot vi.mock one: ${integrationMocking.join(", ")}. Mock in a unit file.`,
  );

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["tests/unit/**/*.test.ts"],
          exclude: UNIT_MOCKING,
          environment: "node",
          testTimeout: 20_000,
          // Opening and migrating a store in beforeAll, two files at once on a busy machine.
          hookTimeout: 60_000,
          maxWorkers: WORKERS,
          ...SHARED_MODULES,
        },
      },
      {
        test: {
          // The unit files that `vi.mock` a module, each with its own module graph.
          name: "unit-mocking",
          include: UNIT_MOCKING,
          environment: "node",
          testTimeout: 20_000,
          hookTimeout: 60_000,
          maxWorkers: WORKERS,
        },
      },
      {
        test: {
          name: "integration",
          include: ["tests/integration/**/*.test.ts"],
          exclude: SERIAL_INTEGRATION,
          environment: "node",
          // On PostgreSQL (WORLDLINE_TEST_POSTGRES), drops the databases each file used.
          setupFiles: ["tests/integration/setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          maxWorkers: WORKERS,
          ...SHARED_MODULES,
        },
      },
      {
        test: {
          name: "integration-serial",
          include: SERIAL_INTEGRATION,
          environment: "node",
          setupFiles: ["tests/integration/setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          // `npm run test:faults`: private PostgreSQL/Redis clusters, stopped and started on purpose.
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
