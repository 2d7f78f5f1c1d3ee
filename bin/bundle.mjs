// The bridge as plain JavaScript: server/ bundled by esbuild into dist/server/<build>/, so
// `worldline` (serve, acp, run) starts without compiling TypeScript at run time.
//
// - Our own code (server/, the generated Prisma clients) and the plain-JavaScript packages it
//   imports are bundled: a start then reads a few files instead of hundreds, and imports no
//   CommonJS package through Node's ESM loader, which lexes each one for its exports (print mode
//   0.81 of the wall time of the same build with every package external, pair by pair). The
//   packages in EXTERNAL stay in node_modules: natives, those that find their own files at run
//   time (Next.js, the language servers, Chromium's driver, the tree-sitter grammars), and
//   http-proxy-3, loaded with a first preview request, whose proxied pages stop loading when it
//   is bundled (tests/e2e/preview.spec.ts).
// - Code splitting keeps `await import()` lazy: what a command does not use is never parsed.
// - Rebuilt when any input changed: the manifest lists every bundled file of ours with its size
//   and mtime (esbuild's metafile), this file, and npm's record of the installed packages (INSTALLED),
//   so checking costs one stat per file (~2 ms), and a build ~1 s.
// - Each build gets its own folder and the manifest is replaced atomically: processes started
//   concurrently (tests) never see a half-written build, and a running bridge keeps the chunks
//   it may still import lazily. The newest KEEP_BUILDS folders, and any younger than an hour, are kept.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const OUT = path.join(ROOT, "dist", "server");
const MANIFEST = path.join(OUT, "manifest.json");
const ENTRY = "server/cli/index.ts";
/** Packages loaded from node_modules at run time rather than bundled (see the header). */
const EXTERNAL = [
  "better-sqlite3",
  "node-pty",
  "@node-rs/argon2",
  "next",
  "react",
  "react-dom",
  "typescript",
  "typescript-language-server",
  "playwright-core",
  "web-tree-sitter",
  "tree-sitter-bash",
  "esbuild",
  "tsx",
  "prisma",
  "http-proxy-3",
];
/** npm rewrites this on every install: one stat stands for every bundled package's files. */
const INSTALLED = "node_modules/.package-lock.json";
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
  await ensureGenerated(log);
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

/**
 * The generated Prisma clients the bundle includes, made when missing (or always, with `force`):
 * both at once, each `prisma generate` being a second of CLI start-up on one core.
 */
export async function ensureGenerated(log, { force = false } = {}) {
  const needed = GENERATED.filter(({ client }) => force || !fs.existsSync(path.join(ROOT, client)));
  await Promise.all(
    needed.map(({ client, args }) => {
      log(`Generating the database client (${path.dirname(client)})…`);
      const child = spawn(path.join(ROOT, "node_modules", ".bin", "prisma"), args, {
        cwd: ROOT,
        stdio: ["ignore", process.stderr, process.stderr],
      });
      return new Promise((resolve, reject) => {
        child.once("error", reject);
        child.once("exit", (code) =>
          code === 0 ? resolve() : reject(new Error(`\`prisma ${args.join(" ")}\` failed with exit code ${code}`)),
        );
      });
    }),
  );
}

async function build(log) {
  const started = Date.now();
  const dir = `build-${Date.now().toString(36)}-${process.pid}`;
  const result = await bundleInto(path.join(OUT, dir), { sourcemap: "linked" });
  const inputs = {};
  const files = Object.keys(result.metafile.inputs).filter((file) => !file.startsWith("node_modules/"));
  files.push("bin/bundle.mjs"); // how it is bundled
  if (fs.existsSync(path.join(ROOT, INSTALLED))) files.push(INSTALLED);
  for (const file of files) {
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
    external: EXTERNAL,
    // Bundled CommonJS packages call `require` (Node's built-ins, and the EXTERNAL ones).
    banner: {
      js: 'import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(import.meta.url);',
    },
    outExtension: { ".js": ".mjs" },
    sourcemap,
    metafile: true,
    logLevel: "warning",
    plugins: [queryCompilerAsFile(outdir)],
  });
}

/**
 * Prisma ships its query compiler as a module holding the WebAssembly in 2.5 MB of base64
 * (`query_compiler_bg.<provider>.wasm-base64.mjs`), which the generated client decodes with
 * `Buffer.from(wasm, "base64")`. Bundled as is, every start parsed that string, kept it in the
 * heap and decoded it. Here its bytes are written beside the bundle as a `.wasm` file, and the
 * module reads them: `Buffer.from` of a Buffer is a copy, whatever the encoding argument.
 * Measured alone: 25-30 ms to import and decode, against 8 ms to read and compile, and 7 MB less
 * resident memory.
 */
function queryCompilerAsFile(outdir) {
  return {
    name: "query-compiler-as-file",
    setup(build) {
      build.onLoad({ filter: /query_compiler_bg\.\w+\.wasm-base64\.mjs$/ }, async (args) => {
        const { wasm } = await import(pathToFileURL(args.path).href);
        const file = path.basename(args.path).replace(".wasm-base64.mjs", ".wasm");
        fs.mkdirSync(outdir, { recursive: true });
        fs.writeFileSync(path.join(outdir, file), Buffer.from(wasm, "base64"));
        return {
          contents: `import { readFileSync } from "node:fs";\nexport const wasm = readFileSync(new URL(${JSON.stringify(`./${file}`)}, import.meta.url));\n`,
          loader: "js",
        };
      });
    },
  };
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
