#!/usr/bin/env node
// The `worldline` command. It runs the bridge bundled as plain JavaScript (bin/bundle.mjs
// builds it when missing or stale); WORLDLINE_DEV=1 runs the TypeScript sources through tsx.
if (process.env.WORLDLINE_DEV === "1") {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../server/cli/index.ts");
} else {
  const { bundledEntry } = await import("./bundle.mjs");
  const { pathToFileURL } = await import("node:url");
  await import(pathToFileURL(await bundledEntry()).href);
}
