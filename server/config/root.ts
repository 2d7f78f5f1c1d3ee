import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The project folder (where package.json, prisma/ and the UI build live). Found by walking up
 * from this module rather than by a fixed `..`: the same code runs from server/config/ under
 * tsx and from the bundle in dist/server/<build>/ (bin/bundle.mjs).
 */
function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (fs.existsSync(path.join(dir, "package.json")) && fs.existsSync(path.join(dir, "server"))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no project folder above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export const ROOT_DIR = findRoot();
