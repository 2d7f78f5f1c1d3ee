import fs from "node:fs/promises";
import path from "node:path";
import type { ProtectedHome } from "../config";
import { WorldlineError } from "../errors";
import { lstatOrNull, nullIfNotFound } from "../stat-or-null";

/**
 * Resolves a workspace-relative path and refuses anything that lands outside the
 * workspace, through `..` or through a symlink, or in the bridge's data folder
 * (`home`) when the workspace holds it. Returns the absolute path and
 * the normalised posix relative path.
 */
export async function resolveInside(
  root: string,
  rel: string,
  home?: ProtectedHome,
): Promise<{ abs: string; rel: string }> {
  if (rel.includes("\0")) throw new WorldlineError("files:invalid", "The path contains a NUL byte.");
  const clean = rel.replace(/\\/g, "/").replace(/^\/+/, "");
  const abs = path.resolve(root, clean);
  if (!isInside(root, abs)) throw outside(rel);
  // The target may not exist yet (a new file): check the nearest existing ancestor.
  let probe = abs;
  for (;;) {
    const real = await fs.realpath(probe).catch(nullIfNotFound); // not there yet: try its parent
    if (real) {
      const realRoot = await fs.realpath(root);
      if (!isInside(realRoot, real)) throw outside(rel);
      if (home?.refuses(path.join(real, path.relative(probe, abs)), realRoot)) throw outside(rel);
      break;
    }
    // A dangling symlink would be followed by the write to wherever it points.
    if ((await lstatOrNull(probe))?.isSymbolicLink()) {
      throw new WorldlineError(
        "files:forbidden",
        `"${rel}" is a symbolic link to a missing target; it is not followed.`,
      );
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
