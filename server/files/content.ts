import { createHash } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import type { ProtectedHome } from "../config";
import { WorldlineError } from "../errors";
import { resolveInside } from "./paths";
import { nullIfNotFound, statOrNull } from "../stat-or-null";

/** The editor is for source files; bigger ones are refused rather than freezing the tab. */
export const MAX_EDIT_BYTES = 2 * 1024 * 1024;

export interface FileContent {
  path: string;
  content: string;
  hash: string;
  mtimeMs: number;
  size: number;
  binary: boolean;
}

export function hashOf(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex").slice(0, 16);
}

export async function readContent(root: string, relPath: string, home?: ProtectedHome): Promise<FileContent> {
  const { abs, rel } = await resolveInside(root, relPath, home);
  const stat = await statOrNull(abs);
  if (!stat || !stat.isFile()) throw new WorldlineError("files:not_found", `No file "${rel}".`);
  if (stat.size > MAX_EDIT_BYTES) {
    throw new WorldlineError(
      "files:too_large",
      `"${rel}" is ${stat.size} bytes; the editor opens files up to ${MAX_EDIT_BYTES}.`,
    );
  }
  const data = await fs.readFile(abs);
  const binary = data.subarray(0, 8000).includes(0);
  return {
    path: rel,
    content: binary ? "" : data.toString("utf8"),
    hash: hashOf(data),
    mtimeMs: stat.mtimeMs,
    size: stat.size,
    binary,
  };
}

/**
 * Writes a file the user edited. `baseHash` is the hash the editor loaded; when
 * the file changed on disk since (the agent, a terminal, another tab), the write
 * is refused with 409 and the current hash unless `force` is set.
 */
export async function writeContent(
  root: string,
  relPath: string,
  input: { content: string; baseHash?: string | null; force?: boolean },
  home?: ProtectedHome,
): Promise<{ path: string; hash: string; mtimeMs: number }> {
  const { abs, rel } = await resolveInside(root, relPath, home);
  if (Buffer.byteLength(input.content) > MAX_EDIT_BYTES)
    throw new WorldlineError("files:too_large", "The file is too large to save from the editor.");
  const current = await fs.readFile(abs).catch(nullIfNotFound); // a new file: nothing to compare the base hash with
  const currentHash = current ? hashOf(current) : null;
  if (!input.force && input.baseHash !== undefined && input.baseHash !== currentHash) {
    throw new WorldlineError("files:conflict", `"${rel}" changed on disk since you opened it.`, {
      details: { path: rel, currentHash },
    });
  }
  await fs.mkdir(path.dirname(abs), { recursive: true });
  const handle = await fs.open(abs, fsConstants.O_WRONLY | fsConstants.O_CREAT);
  try {
    // Checked on the open file, so a link made after the path was checked is refused too.
    const links = (await handle.stat()).nlink;
    if (links > 1) throw hardLinked(rel, links);
    await handle.truncate(0);
    await handle.writeFile(input.content);
  } finally {
    await handle.close();
  }
  const stat = await fs.stat(abs);
  return { path: rel, hash: hashOf(input.content), mtimeMs: stat.mtimeMs };
}

/**
 * A file with more than one name is not written through (SECURITY.md): another of its names may be
 * outside the workspace (or a runner's roots), and nothing short of a walk of the whole disk finds
 * where; the agent's own writes refuse it the same way on a runner (server/runner/guard.ts).
 */
function hardLinked(rel: string, links: number): WorldlineError {
  return new WorldlineError(
    "files:forbidden",
    `"${rel}" has ${links} hard links; another of its names may be outside the workspace, so the editor does not save through it. To edit it, break the link first (copy it, then move the copy over it).`,
  );
}
