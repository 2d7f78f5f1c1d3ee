import fs from "node:fs/promises";
import path from "node:path";
import { WorldlineError } from "../errors";

/**
 * Resolves a workspace-relative path and refuses anything that lands outside the
 * workspace, through `..` or through a symlink. Returns the absolute path and
 * the normalised posix relative path.
 */
export async function resolveInside(root: string, rel: string): Promise<{ abs: string; rel: string }> {
  const clean = rel.replace(/\\/g, "/").replace(/^\/+/, "");
  const abs = path.resolve(root, clean);
  if (!isInside(root, abs)) throw outside(rel);
  // The target may not exist yet (a new file): check the nearest existing ancestor.
  let probe = abs;
  for (;;) {
    const real = await fs.realpath(probe).catch(() => null);
    if (real) {
      if (!isInside(await fs.realpath(root), real)) throw outside(rel);
      break;
    }
    const parent = path.dirname(probe);
    if (parent === probe) break;
    probe = parent;
  }
  return { abs, rel: path.relative(root, abs).split(path.sep).join("/") };
}

function isInside(root: string, abs: string): boolean {
  const relative = path.relative(root, abs);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

function outside(rel: string): WorldlineError {
  return new WorldlineError("files:forbidden", `"${rel}" is outside the workspace.`);
}
