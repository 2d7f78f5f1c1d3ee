import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { isNotFound } from "../stat-or-null";

/** Everything the production web build is made from; a change in any of it means rebuild. */
const BUILD_INPUTS = [
  "app",
  "components",
  "server/protocol",
  "next.config.js",
  "postcss.config.mjs",
  "package-lock.json",
];

/**
 * `npm start` builds what is missing: the Prisma client and the Next.js
 * production build, the latter when absent or when its inputs changed.
 */
export function ensureBuilt(root: string, log: (line: string) => void): void {
  if (!fs.existsSync(path.join(root, "server/store/generated/prisma/client.ts"))) {
    log("Generating the database client…");
    run(root, ["prisma", "generate"]);
  }
  const distDir = path.join(root, process.env.WORLDLINE_NEXT_DIST ?? ".next");
  const stampFile = path.join(distDir, "worldline-build-stamp");
  const stamp = fingerprint(root);
  const built = fs.existsSync(path.join(distDir, "BUILD_ID")) && readOr(stampFile) === stamp;
  if (built) return;
  log("Building the web UI (first start or sources changed; about a minute)…");
  run(root, ["next", "build"]);
  fs.writeFileSync(stampFile, stamp);
}

function run(root: string, args: string[]): void {
  const bin = path.join(root, "node_modules", ".bin", args[0]);
  // Build output goes to stderr: stdout carries only the ready line.
  const result = spawnSync(bin, args.slice(1), {
    cwd: root,
    stdio: ["ignore", process.stderr, process.stderr],
    env: { NEXT_TELEMETRY_DISABLED: "1", ...process.env },
  });
  if (result.status !== 0) throw new Error(`\`${args.join(" ")}\` failed with exit code ${result.status}`);
}

/** Paths, sizes and modification times: cheap to compute, changes whenever a source does. */
function fingerprint(root: string): string {
  const hash = createHash("sha256");
  const visit = (relative: string) => {
    const full = path.join(root, relative);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(full);
    } catch (error) {
      if (isNotFound(error)) return; // an input this checkout does not have
      throw error;
    }
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(full).sort()) visit(path.join(relative, name));
      return;
    }
    hash.update(`${relative}\0${stat.size}\0${stat.mtimeMs}\n`);
  };
  BUILD_INPUTS.forEach(visit);
  return hash.digest("hex");
}

function readOr(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
