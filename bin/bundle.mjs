// The bridge as plain JavaScript: server/ bundled by esbuild into dist/server/<build>/, so
// `worldline` (serve, acp, run) starts without compiling TypeScript at run time.
//
// - Our own code (server/, the generated Prisma clients) is bundled; every npm package stays
//   external and loads from node_modules as usual (natives such as node-pty and better-sqlite3,
//   Next.js, Prisma's runtime and its WebAssembly need their own files).
// - Code splitting keeps `await import()` lazy: what a command does not use is never parsed.
// - Rebuilt when any input changed: the manifest lists every bundled file with its size and
//   mtime (esbuild's metafile), so checking costs one stat per file (~2 ms), and a build ~0.3 s.
// - Each build gets its own folder and the manifest is replaced atomically: processes started
//   concurrently (tests) never see a half-written build, and a running bridge keeps the chunks
//   it may still import lazily. The newest KEEP_BUILDS folders, and any younger than an hour, are kept.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const OUT = path.join(ROOT, "dist", "server");
const MANIFEST = path.join(OUT, "manifest.json");
const ENTRY = "server/cli/index.ts";
/** Old builds kept for bridges still running from them (their lazy chunks)… */
const KEEP_BUILDS = 3;
/** …and any build younger than this: processes that bundled concurrently are about to import theirs. */
const KEEP_BUILDS_MS = 60 * 60_000;
/** Generated Prisma clients the bundle includes; `prisma generate` makes them when missing. */
const GENERATED = [
  { client: "server/store/generated/prisma/client.ts", args: ["generate"] },
  {
    client: "server/store/generated/postgres/client.ts",
    args: ["generate", "--config", "prisma/postgres/prisma.config.ts"],
  },
];

/** The bundle's entry file, building it first when missing or stale. */
export async function bundledEntry(log = (line) => process.stderr.write(`[worldline] ${line}\n`)) {
  const current = readManifest();
  if (current && upToDate(current)) return path.join(OUT, current.dir, current.entry);
  ensureGenerated(log);
  return path.join(OUT, ...(await build(log)));
}

function readManifest() {
  try {
    return JSON.parse(fs.readFileSync(MANIFEST, "utf8"));
  } catch {
    return undefined; // no build yet (or a manifest that cannot be read): build one
  }
}

function upToDate(manifest) {
  if (!fs.existsSync(path.join(OUT, manifest.dir, manifest.entry))) return false;
  for (const [file, [size, mtimeMs]] of Object.entries(manifest.inputs)) {
    const stat = fs.statSync(path.join(ROOT, file), { throwIfNoEntry: false });
    if (!stat || stat.size !== size || stat.mtimeMs !== mtimeMs) return false;
  }
  return true;
}

/** The generated Prisma clients the bundle includes, made when missing (or always, with `force`). */
export function ensureGenerated(log, { force = false } = {}) {
  for (const { client, args } of GENERATED) {
    if (!force && fs.existsSync(path.join(ROOT, client))) continue;
    log(`Generating the database client (${path.dirname(client)})…`);
    const result = spawnSync(path.join(ROOT, "node_modules", ".bin", "prisma"), args, {
      cwd: ROOT,
      stdio: ["ignore", process.stderr, process.stderr],
    });
    if (result.status !== 0) throw new Error(`\`prisma ${args.join(" ")}\` failed with exit code ${result.status}`);
  }
}

async function build(log) {
  const started = Date.now();
  const dir = `build-${Date.now().toString(36)}-${process.pid}`;
  const result = await bundleInto(path.join(OUT, dir), { sourcemap: "linked" });
  const inputs = {};
  for (const file of Object.keys(result.metafile.inputs)) {
    const stat = fs.statSync(path.join(ROOT, file));
    inputs[file] = [stat.size, stat.mtimeMs];
  }
  const manifest = { dir, entry: "cli.mjs", inputs };
  const temporary = `${MANIFEST}.${process.pid}`;
  fs.writeFileSync(temporary, JSON.stringify(manifest));
  fs.renameSync(temporary, MANIFEST);
  pruneOldBuilds(dir);
  log(`Bundled the bridge in ${Date.now() - started} ms (${Object.keys(inputs).length} files).`);
  return [dir, manifest.entry];
}

/** esbuild over server/ into `outdir` (entry `cli.mjs`); also what `npm pack` ships (scripts/pack.mjs). */
export async function bundleInto(outdir, { sourcemap }) {
  const { build: esbuild } = await import("esbuild");
  return esbuild({
    absWorkingDir: ROOT,
    entryPoints: { cli: ENTRY },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    outExtension: { ".js": ".mjs" },
    sourcemap,
    metafile: true,
    logLevel: "warning",
  });
}

function pruneOldBuilds(keep) {
  const builds = fs
    .readdirSync(OUT, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name.startsWith("build-") && entry.name !== keep)
    .map((entry) => ({ name: entry.name, mtimeMs: fs.statSync(path.join(OUT, entry.name)).mtimeMs }))
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const old of builds.slice(KEEP_BUILDS - 1)) {
    if (Date.now() - old.mtimeMs < KEEP_BUILDS_MS) continue;
    fs.rmSync(path.join(OUT, old.name), { recursive: true, force: true });
  }
}
