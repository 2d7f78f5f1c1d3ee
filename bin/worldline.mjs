#!/usr/bin/env node
// The `worldline` command. Installed from the package (npm pack), it runs the bridge prebuilt in
// dist/bridge/ (scripts/pack.mjs); in a checkout it runs the bridge bundled by bin/bundle.mjs
// (built when missing or stale), and WORLDLINE_DEV=1 runs the TypeScript sources through tsx.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const checkout = fs.existsSync(path.join(root, "server", "main.ts"));

if (!checkout) {
  await import(pathToFileURL(path.join(root, "dist", "bridge", "cli.mjs")).href);
} else if (process.env.WORLDLINE_DEV === "1") {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../server/cli/index.ts");
} else {
  const { bundledEntry } = await import("./bundle.mjs");
  await import(pathToFileURL(await bundledEntry()).href);
}
