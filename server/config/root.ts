import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The project folder (where package.json, prisma/ and the UI build live). Found by walking up
 * from this module rather than by a fixed `..`: the same code runs from server/config/ under
 * tsx, from the bundle in dist/server/<build>/ (bin/bundle.mjs) and from the installed
 * package's dist/bridge/ (scripts/pack.mjs), which has prisma/ but no TypeScript sources.
 */
function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (fs.existsSync(path.join(dir, "package.json")) && fs.existsSync(path.join(dir, "prisma"))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no project folder above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export const ROOT_DIR = findRoot();

/**
 * True when running from the published package (npm pack): it holds the prebuilt UI and bridge
 * but no sources, so nothing is built, generated or written inside it at run time.
 */
export const PACKAGED = !fs.existsSync(path.join(ROOT_DIR, "server", "main.ts"));
