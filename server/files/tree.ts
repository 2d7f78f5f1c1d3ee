import fs from "node:fs/promises";
import type { WorkspaceIgnore } from "../ignore";
import { resolveInside } from "./paths";

export interface TreeEntry {
  name: string;
  path: string;
  type: "file" | "dir";
}

/** A directory listing never returns more than this; a giant folder shows its first entries. */
export const MAX_DIR_ENTRIES = 2_000;

/** One level of the tree: folders first, then files, names sorted, ignored entries left out. */
export async function listDir(
  root: string,
  rules: WorkspaceIgnore,
  relDir: string,
): Promise<{ path: string; entries: TreeEntry[]; truncated: boolean }> {
  const { abs, rel } = await resolveInside(root, relDir);
  const dirents = await fs.readdir(abs, { withFileTypes: true });
  const entries: TreeEntry[] = [];
  for (const dirent of dirents) {
    const isDir =
      dirent.isDirectory() ||
      (dirent.isSymbolicLink() &&
        (await fs.stat(`${abs}/${dirent.name}`).then(
          (s) => s.isDirectory(),
          () => false,
        )));
    const childRel = rel ? `${rel}/${dirent.name}` : dirent.name;
    if (await rules.ignored(childRel, isDir)) continue;
    entries.push({ name: dirent.name, path: childRel, type: isDir ? "dir" : "file" });
  }
  entries.sort((a, b) => (a.type === b.type ? a.name.localeCompare(b.name) : a.type === "dir" ? -1 : 1));
  return { path: rel, entries: entries.slice(0, MAX_DIR_ENTRIES), truncated: entries.length > MAX_DIR_ENTRIES };
}

/** Every file of the workspace (ignored ones left out), breadth first, up to `cap`. */
export async function walkFiles(
  root: string,
  rules: WorkspaceIgnore,
  cap: number,
): Promise<{ files: string[]; truncated: boolean }> {
  const files: string[] = [];
  const queue = [""];
  while (queue.length > 0) {
    const dir = queue.shift() as string;
    const dirents = await fs.readdir(dir ? `${root}/${dir}` : root, { withFileTypes: true }).catch(() => []); // a folder that vanished or is unreadable lists empty
    for (const dirent of dirents) {
      const rel = dir ? `${dir}/${dirent.name}` : dirent.name;
      const isDir = dirent.isDirectory();
      if (await rules.ignored(rel, isDir)) continue;
      if (isDir) queue.push(rel);
      else if (dirent.isFile()) {
        files.push(rel);
        if (files.length >= cap) return { files, truncated: true };
      }
    }
  }
  return { files, truncated: false };
}
