// `npm run test:e2e`: make sure the production build is current, then run Playwright.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";
import { useHermeticHome } from "../support/hermetic-home.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
register();
// The bridge Playwright starts (and its terminals) inherit it.
useHermeticHome();
const { ensureBuilt } = await import("../../server/cli/build.ts");
ensureBuilt(root, (line) => process.stderr.write(`[e2e] ${line}\n`));

const result = spawnSync(
  process.execPath,
  [path.join(root, "node_modules/@playwright/test/cli.js"), "test", ...process.argv.slice(2)],
  {
    cwd: root,
    stdio: "inherit",
  },
);
process.exit(result.status ?? 1);
