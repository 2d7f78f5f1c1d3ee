// `prepack` (npm pack, npm publish): builds everything the published package runs, so that an
// installed `worldline` never builds, generates, downloads or writes into its own folder
// (README, "Quick start"). What goes into the tarball is package.json's `files`.
//   1. the Prisma clients, regenerated from the schemas (the bridge bundle includes them);
//   2. the bridge, bundled into dist/bridge/ (replaced whole, so no stale chunk is shipped), with
//      the bash grammar's WebAssembly beside it (tree-sitter-bash is not a runtime dependency);
//   3. the web UI's production build in .next/, when missing or stale: the same check, and the
//      same build, as `npm start` (server/cli/build.ts), so neither redoes the other's work.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { bundleInto, ensureGenerated } from "../bin/bundle.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BRIDGE_OUT = path.join(ROOT, "dist", "bridge");
const log = (line) => process.stderr.write(`[pack] ${line}\n`);

await ensureGenerated(log, { force: true });

const started = Date.now();
fs.rmSync(BRIDGE_OUT, { recursive: true, force: true });
// No source maps: they would double the bridge's size in every install for stack traces nobody symbolicates.
await bundleInto(BRIDGE_OUT, { sourcemap: false });
log(`bundled the bridge into dist/bridge in ${Date.now() - started} ms`);
// The shell classifier's bash grammar is all it uses of tree-sitter-bash (a devDependency, whose
// install script builds a native binding): the package carries just this file, where
// server/tools/shell/parse.ts (PACKED_GRAMMAR) looks for it.
fs.copyFileSync(
  createRequire(import.meta.url).resolve("tree-sitter-bash/tree-sitter-bash.wasm"),
  path.join(BRIDGE_OUT, "tree-sitter-bash.wasm"),
);

// The UI build check lives in TypeScript (server/cli/build.ts); tsx is a devDependency, present when packing.
const { register } = await import("tsx/esm/api");
register();
const { ensureBuilt } = await import("../server/cli/build.ts");
if (process.env.WORLDLINE_NEXT_DIST)
  throw new Error("unset WORLDLINE_NEXT_DIST: the package ships the UI build in .next/");
ensureBuilt(ROOT, log);
log("the web UI build in .next/ is current");
