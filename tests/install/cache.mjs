// Where a passing `npm run test:install` leaves its global install of the tarball, for
// bench/installed.ts to time `worldline` from without installing again (npm compiles two native
// modules here: minutes). Keyed by the tarball's hash: npm pack writes fixed mtimes, so the
// same build packs to the same bytes, and any change to what ships is a new install.
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const CACHE_ROOT = path.join(os.tmpdir(), "worldline-installed");

/** The prefix folder (`bin/worldline` inside) for this tarball, whether or not it is there yet. */
export function cachedPrefix(tarball) {
  const hash = createHash("sha256").update(fs.readFileSync(tarball)).digest("hex").slice(0, 16);
  return path.join(CACHE_ROOT, hash);
}

/** Keeps `prefix` (an `npm install -g --prefix` of `tarball`) as the cached install; older ones go. */
export function keepInstall(tarball, prefix) {
  const target = cachedPrefix(tarball);
  fs.rmSync(CACHE_ROOT, { recursive: true, force: true });
  fs.mkdirSync(CACHE_ROOT, { recursive: true });
  // The prefix's bin/ links are relative, so the folder can move.
  fs.renameSync(prefix, target);
  return target;
}
